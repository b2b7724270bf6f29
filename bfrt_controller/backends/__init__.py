"""Switch backends: `model` (reference model, no SDE) and `bfrt` (BF-Runtime gRPC)."""
