"""The model conductor (paper 003): an ensemble of models sharing one scene."""
