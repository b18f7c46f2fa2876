# The provider talks to a Grove agent: `grove agent -dev` listens on
# http://127.0.0.1:7470. Set `address` (and `token`) here, or GROVE_ADDR
# (and GROVE_TOKEN) in the environment.
provider "grove" {
  # address = "http://127.0.0.1:7470"
}
