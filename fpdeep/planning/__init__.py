"""Planning: boards, the cluster, partition, allocation and the performance model."""
