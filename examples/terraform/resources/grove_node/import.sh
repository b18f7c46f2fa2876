# A node imports by id, name or short id.
terraform import grove_node.single example-node
