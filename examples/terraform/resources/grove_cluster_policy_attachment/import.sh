# CLUSTER/POLICY, each an id or a name.
terraform import grove_cluster_policy_attachment.youngest_first example-app/example-youngest-first
