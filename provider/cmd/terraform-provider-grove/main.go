// Command terraform-provider-grove serves Grove's Terraform provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/grovehq/grove/provider"
)

// version is stamped at build time.
var version = "0.1.0-dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers (TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{Address: provider.Address, Debug: *debug})
	if err != nil {
		log.Fatal(err)
	}
}
