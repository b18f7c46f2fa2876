// Command grove-vcsim serves the vSphere simulator inventory of
// internal/vcsimtest on a loopback address and prints, one KEY=VALUE a line,
// what an agent needs to reach it (GOVC_URL and the others), then
// GROVE_VCSIM_PID. It serves until interrupted. scripts/vcsim.sh runs it in
// the background; end-to-end tests build and start it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/grovehq/grove/internal/vcsimtest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on; loopback only")
	flag.Parse()
	sim, err := vcsimtest.Start(*listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "grove-vcsim:", err)
		os.Exit(1)
	}
	for _, kv := range sim.Env() {
		fmt.Println(kv)
	}
	fmt.Printf("GROVE_VCSIM_PID=%d\n", os.Getpid())
	fmt.Println("GROVE_VCSIM_READY=1")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	sim.Close()
}
