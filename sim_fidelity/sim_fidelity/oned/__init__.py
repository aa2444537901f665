"""Paper 001's 1-D example: a box on a track with mud regions, its missions, SARSA redesign, end to end."""
