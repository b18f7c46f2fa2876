# A policy imports by id, name or short id.
terraform import grove_policy.oldest_first example-oldest-first
