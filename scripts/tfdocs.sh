#!/usr/bin/env bash
# Regenerates the Terraform provider's reference docs (docs/terraform-provider)
# with tfplugindocs, from the provider's schema and examples/terraform.
# Offline: the schema comes from the terraform CLI through dev_overrides.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
go build -o "$tmp/bin/terraform-provider-grove" ./provider/cmd/terraform-provider-grove
cat > "$tmp/dev.tfrc" <<TFRC
provider_installation {
  dev_overrides {
    "registry.terraform.io/grovehq/grove" = "$tmp/bin"
  }
  direct {}
}
TFRC
mkdir "$tmp/cfg"
printf 'terraform {\n  required_providers {\n    grove = { source = "grovehq/grove" }\n  }\n}\n' > "$tmp/cfg/main.tf"
(cd "$tmp/cfg" && TF_CLI_CONFIG_FILE="$tmp/dev.tfrc" CHECKPOINT_DISABLE=1 terraform providers schema -json) > "$tmp/schema.raw.json"
sed 's#"registry.terraform.io/grovehq/grove"#"grove"#' "$tmp/schema.raw.json" > "$tmp/schema.json"
cd "$root/tools"
go tool tfplugindocs generate --provider-dir "$root" --provider-name grove --providers-schema "$tmp/schema.json" \
  --examples-dir examples/terraform --rendered-website-dir docs/terraform-provider >/dev/null
# Nothing in the repository links outside it (docs/links_test.go): the links
# tfplugindocs's templates and the timeouts descriptions carry become their text.
find "$root/docs/terraform-provider" -name '*.md' -exec \
  sed -i -E 's/\[([^]]*)\]\((https?:|www\.)[^)]*\)/\1/g' {} +
