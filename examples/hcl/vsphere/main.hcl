# VMs cloned from a template on vSphere. Start the agent with GOVC_URL,
# GOVC_USERNAME, GOVC_PASSWORD (and GOVC_INSECURE=1 for a self-signed
# certificate) exported; scripts/vcsim.sh up prints them for the simulator,
# whose inventory the defaults below name. See docs/vsphere.md.

grove {
  set = "vsphere"
}

variable "cluster" {
  type        = string
  default     = "DC0_C0"
  description = "The vSphere compute cluster the VMs run in."
}

variable "template" {
  type        = string
  default     = "grove-template"
  description = "The template each VM is cloned from."
}

variable "memory_mb" {
  type        = number
  default     = 256
  description = "Memory per VM; a change is rolled out one VM at a time by reconfigure."
}

variable "nodes" {
  type    = number
  default = 3

  validation {
    condition     = var.nodes >= 0 && var.nodes <= 50
    error_message = "nodes must be between 0 and 50."
  }
}

profile "vm" {
  type    = "vsphere.vm"
  version = "1.0"

  properties {
    datacenter = "DC0"
    cluster    = var.cluster
    template   = var.template
    num_cpus   = 1
    memory_mb  = var.memory_mb
    annotation = "managed by Grove"
  }
}

cluster "vsphere" {
  profile          = profile.vm
  desired_capacity = var.nodes
  max_size         = 50
  config           = { "node.name.format" = "vm-$2I" }

  restart {
    condition    = "any"
    delay        = "1s"
    max_attempts = 10
    window       = "5m"
  }

  update {
    parallelism = 1
    monitor     = "1s"
  }
}
