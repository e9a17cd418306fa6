package perftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/internal/remote"
)

// TestMain turns the test binary into fakePerftest, a test double of the
// perftest tools, when it is started under a perftest name (symlinks made by
// fakeToolDir). The double opens perftest's real TCP control connection on
// -p and prints a canned table; it cannot do RDMA.
func TestMain(m *testing.M) {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "ib_") {
		os.Exit(fakePerftest(os.Args))
	}
	os.Exit(m.Run())
}

func fakePerftest(argv []string) int {
	mode := os.Getenv("FAKE_PERFTEST_MODE")
	port, server := "", ""
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-d", "-i", "-x", "-s", "-D", "-n", "-q", "-T", "--tclass":
			i++
		case "-p":
			port = argv[i+1]
			i++
		default:
			if !strings.HasPrefix(argv[i], "-") {
				server = argv[i]
			}
		}
	}
	role := "server"
	if server != "" {
		role = "client"
	}
	if dir := os.Getenv("FAKE_PERFTEST_PIDDIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, role+".pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		if f, err := os.OpenFile(filepath.Join(dir, role+".starts"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString("x")
			f.Close()
		}
	}
	table, _ := os.ReadFile(os.Getenv("FAKE_PERFTEST_TABLE"))
	if role == "server" {
		if mode == "server-crash" {
			fmt.Fprintln(os.Stderr, " Couldn't create IB resources")
			return 1
		}
		if mode != "no-banner" {
			// perftest prints its banner before it listens.
			fmt.Println("\n************************************\n* Waiting for client to connect... *\n************************************")
		}
		if mode == "late-listen" {
			time.Sleep(500 * time.Millisecond)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		_, _ = io.Copy(io.Discard, c)
		os.Stdout.Write(table)
		return 0
	}
	c, err := net.Dial("tcp", net.JoinHostPort(server, port))
	if err != nil {
		fmt.Fprintln(os.Stderr, " Unable to init the socket connection")
		return 1
	}
	if mode == "client-hang" {
		time.Sleep(time.Hour)
	}
	_, _ = c.Write([]byte("x"))
	c.Close()
	os.Stdout.Write(table)
	return 0
}

// fakeToolDir makes a directory where ib_write_bw and ib_write_lat are the
// test binary (fakePerftest).
func fakeToolDir(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tool := range []string{"ib_write_bw", "ib_write_lat"} {
		if err := os.Symlink(exe, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// alive reports whether the fake wrote pid file role.pid and that process
// still exists.
func alive(t *testing.T, dir, role string) (started, running bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, role+".pid"))
	if err != nil {
		return false, false
	}
	pid, _ := strconv.Atoi(string(b))
	return true, syscall.Kill(pid, 0) == nil
}

func TestRunPair(t *testing.T) {
	tools := fakeToolDir(t)
	abs, err := filepath.Abs("testdata/output/ib_write_bw_606_mb.txt")
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Tool: "ib_write_bw", Duration: time.Second, ToS: 106}
	tests := []struct {
		name        string
		mode        string
		timeout     time.Duration
		wantErr     bool
		wantCtxErr  error
		wantClient  bool // the client was started
		wantNotRdy  bool
		wantAvgGbps float64
		rdmacm      bool
		wantStarts  int // client starts, when > 0
	}{
		{name: "ok", wantClient: true, wantAvgGbps: 11030.45 * mebibyteGbps},
		{name: "ready by listening socket", mode: "no-banner", wantClient: true, wantAvgGbps: 11030.45 * mebibyteGbps},
		{name: "rdma_cm: banner before listen, client retries", mode: "late-listen", rdmacm: true, wantClient: true, wantStarts: 2, wantAvgGbps: 11030.45 * mebibyteGbps},
		{name: "server crash", mode: "server-crash", wantErr: true},
		{name: "client hangs past the timeout", mode: "client-hang", wantErr: true, wantClient: true},
		{name: "ctx cancelled mid-run", mode: "client-hang", timeout: 1500 * time.Millisecond, wantErr: true, wantClient: true, wantCtxErr: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pids := t.TempDir()
			t.Setenv("FAKE_PERFTEST_MODE", tt.mode)
			t.Setenv("FAKE_PERFTEST_PIDDIR", pids)
			t.Setenv("FAKE_PERFTEST_TABLE", abs)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			e := &Engine{ToolDir: tools, ReadyTimeout: 5 * time.Second, Slack: 2 * time.Second, Poll: 20 * time.Millisecond}
			end := End{Device: "mlx5_0", Port: 1, GIDIndex: 3}
			srv := Side{Runner: remote.Local{Name: "gpu1"}, End: end, Addr: "127.0.0.1"}
			cli := Side{Runner: remote.Local{Name: "gpu2"}, End: end}
			spec := spec
			spec.RDMACM = tt.rdmacm
			res, err := e.RunPair(ctx, spec, srv, cli, freePort(t))
			if tt.wantErr != (err != nil) {
				t.Fatalf("RunPair error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "gpu1/mlx5_0") {
				t.Errorf("RunPair error %q does not name the server's host and RDMA device (gpu1/mlx5_0)", err)
			}
			if tt.wantCtxErr != nil && !errors.Is(err, tt.wantCtxErr) {
				t.Errorf("RunPair error = %v, want %v", err, tt.wantCtxErr)
			}
			if err == nil {
				if got := res.Report.Bandwidth[0].AvgGbps; math.Abs(got-tt.wantAvgGbps) > 1e-9 {
					t.Errorf("avg = %v Gb/s, want %v", got, tt.wantAvgGbps)
				}
			}
			if tt.wantStarts > 0 {
				b, _ := os.ReadFile(filepath.Join(pids, "client.starts"))
				if len(b) < tt.wantStarts {
					t.Errorf("client started %d times, want at least %d (a retry)", len(b), tt.wantStarts)
				}
			}
			for _, role := range []string{"server", "client"} {
				started, running := alive(t, pids, role)
				if role == "client" && started != tt.wantClient {
					t.Errorf("client started = %v, want %v", started, tt.wantClient)
				}
				if running {
					t.Errorf("%s still running after RunPair returned", role)
				}
			}
		})
	}
}
