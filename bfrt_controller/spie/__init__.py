"""S-PIE (tna/spie/spie.p4): PIE with a count-min sketch, and plain PIE."""
