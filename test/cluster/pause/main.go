// Command pause is the pod sandbox image of `make e2e-cluster`'s containerd
// (no registry is reachable here, so Kubernetes' own pause image cannot be
// pulled): it holds the pod's namespaces open, reaps orphaned children as PID
// 1 must, and exits on SIGINT or SIGTERM, as registry.k8s.io/pause does.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
