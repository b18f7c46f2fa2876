data "grove_policy_types" "all" {}

output "policy_types" {
  value = [for t in data.grove_policy_types.all.types : "${t.name}-${t.version}"]
}
