data "grove_profile_types" "all" {}

output "profile_types" {
  value = [for t in data.grove_profile_types.all.types : "${t.name}-${t.version}"]
}
