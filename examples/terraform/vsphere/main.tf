# VMs cloned from a template on vSphere. The agent reaches vCenter through
# GOVC_URL and the other GOVC_* variables in its environment; vsphere_url
# puts the connection in the profile instead (the tests point it at the
# simulator). The defaults name the simulator's inventory (scripts/vcsim.sh).
terraform {
  required_providers {
    grove = {
      source = "grovehq/grove"
    }
  }
}

variable "vsphere_url" {
  type        = string
  default     = null
  description = "vCenter's SDK URL with credentials; null uses the agent's GOVC_URL."
}

variable "template" {
  type    = string
  default = "grove-template"
}

variable "memory_mb" {
  type        = number
  default     = 256
  description = "Memory per VM; a change rolls the cluster VM by VM."
}

resource "grove_profile" "vm" {
  name    = "tf-vsphere-vm"
  type    = "vsphere.vm"
  version = "1.0"
  properties = jsonencode({
    connection = var.vsphere_url == null ? null : { url = var.vsphere_url, insecure = true }
    datacenter = "DC0"
    cluster    = "DC0_C0"
    template   = var.template
    num_cpus   = 1
    memory_mb  = var.memory_mb
  })
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_cluster" "vms" {
  name             = "tf-vsphere"
  profile_id       = grove_profile.vm.id
  desired_capacity = 2
  restart = {
    condition = "any"
    delay     = "1s"
  }
  update = {
    parallelism = 1
    monitor     = "1s"
  }
}

data "grove_nodes" "vms" {
  cluster_id = grove_cluster.vms.id
  depends_on = [grove_cluster.vms]
}

output "vms" {
  value = [for n in data.grove_nodes.vms.nodes : n.name]
}
