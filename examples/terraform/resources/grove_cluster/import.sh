# A cluster imports by id, name or short id.
terraform import grove_cluster.workers example-workers
