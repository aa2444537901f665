"""The truck-unloading case study of paper 000 (Sec. 4-5): robot scripts, controller, benchmark."""
