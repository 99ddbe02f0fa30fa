// Command etcd is etcd's own server entry point, built from the go.etcd.io/etcd/server/v3
// module so that the test binaries can be produced from the Go module proxy alone.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
