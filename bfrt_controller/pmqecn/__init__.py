"""The PMQECN app: config, intended switch state, and the optimise-and-apply loop."""
