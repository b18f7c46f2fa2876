# A policy imports by id, name or short id.
import {
  to = grove_policy.oldest_first
  id = "example-oldest-first"
}
