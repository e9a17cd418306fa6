package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fabricctl/fabricctl/internal/remote"
)

// A perftest-style server: start it, wait until it says it is ready, run the
// client, stop the server (killing everything it started).
func ExampleRunner_Start() {
	ctx := context.Background()
	var r remote.Runner = remote.Local{Name: "gpu1"} // or remote.ForHost(host, opts)
	srv, err := r.Start(ctx, []string{"sh", "-c", "echo 'Waiting for client to connect...'; exec sleep 60"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for !bytes.Contains(srv.Output(), []byte("Waiting for client")) {
		time.Sleep(10 * time.Millisecond)
	}
	res, err := r.Run(ctx, []string{"echo", "client done"}, nil)
	fmt.Print(string(res.Stdout), err, "\n")
	res, err = srv.Stop()
	fmt.Println(res.ExitCode, err)
	// Output:
	// client done
	// <nil>
	// -1 <nil>
}

// Fan out over hosts, at most 2 at a time, and report per host in order.
func ExampleForEach() {
	hosts := []string{"gpu1", "gpu2", "gpu3"}
	errs := remote.ForEach(context.Background(), len(hosts), 2, func(ctx context.Context, i int) error {
		_, err := remote.Local{Name: hosts[i]}.Run(ctx, []string{"sh", "-c", fmt.Sprintf("exit %d", i%2)}, nil)
		return err
	})
	for i, err := range errs {
		var ee *remote.ExitError
		switch {
		case errors.As(err, &ee):
			fmt.Printf("%s: exit %d\n", hosts[i], ee.ExitCode)
		case err != nil:
			fmt.Printf("%s: %v\n", hosts[i], err)
		default:
			fmt.Printf("%s: ok\n", hosts[i])
		}
	}
	// Output:
	// gpu1: ok
	// gpu2: exit 1
	// gpu3: ok
}
