terraform import grove_node.single example-node
