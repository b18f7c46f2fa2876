# CLUSTER/POLICY, each an id or a name.
import {
  to = grove_cluster_policy_attachment.youngest_first
  id = "example-app/example-youngest-first"
}
