"""Paper 001's 1-D example, end to end: a box on a track with mud regions, its missions, SARSA
redesign."""
