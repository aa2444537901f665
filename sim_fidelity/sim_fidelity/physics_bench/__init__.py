"""Paper 002's physics benchmark: step timing, its statistics and plots, MuJoCo's own parallel
alternatives, and the Appendix's position-correction checks (``simfid bench physics``)."""
