resource "grove_policy" "p" {
  name       = "example-ds-policy"
  type       = "senlin.policy.deletion"
  version    = "1.0"
  properties = jsonencode({})
}

data "grove_policy" "p" {
  id_or_name = grove_policy.p.id
}
