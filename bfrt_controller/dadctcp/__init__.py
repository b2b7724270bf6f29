"""DA-DCTCP on a switch: slope-aware marking thresholds and Algorithm 2."""
