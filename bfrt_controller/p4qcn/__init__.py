"""P4QCN controller app (tna/p4qcn)."""
