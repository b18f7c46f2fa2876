# A cluster imports by id, name or short id.
import {
  to = grove_cluster.workers
  id = "example-workers"
}
