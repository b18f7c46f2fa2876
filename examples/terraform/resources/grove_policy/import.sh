terraform import grove_policy.oldest_first example-oldest-first
