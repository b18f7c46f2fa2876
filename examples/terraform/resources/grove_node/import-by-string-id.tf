# A node imports by id, name or short id.
import {
  to = grove_node.single
  id = "example-node"
}
