package twin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

func streamOf(t *testing.T, c gnmipb.GNMIClient, sl *gnmipb.SubscriptionList) (gnmipb.GNMI_SubscribeClient, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	st, err := c.Subscribe(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := st.Send(&gnmipb.SubscribeRequest{Request: &gnmipb.SubscribeRequest_Subscribe{Subscribe: sl}}); err != nil {
		cancel()
		t.Fatal(err)
	}
	return st, cancel
}

// leaves reads notifications until the sync response (first=true) or until
// one notification arrived, and returns path -> value text.
func recvLeaves(t *testing.T, st gnmipb.GNMI_SubscribeClient, untilSync bool) (map[string]string, []string) {
	t.Helper()
	out := map[string]string{}
	var deleted []string
	for {
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.GetSyncResponse() {
			return out, deleted
		}
		n := r.GetUpdate()
		for _, u := range n.GetUpdate() {
			full := &gnmipb.Path{Elem: append(append([]*gnmipb.PathElem{}, n.GetPrefix().GetElem()...), u.GetPath().GetElem()...)}
			v, _, _ := jtree.Typed(u.GetVal())
			out[jtree.PathKey(full)] = jtree.Text(v)
		}
		for _, d := range n.GetDelete() {
			deleted = append(deleted, jtree.PathKey(d))
		}
		if !untilSync {
			return out, deleted
		}
	}
}

// TestStreamSampleCountersMove: a SAMPLE subscription resends the counters
// every interval, and traffic played through the port moves them.
func TestStreamSampleCountersMove(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err := tw.Play("ethernet-1/1", 3, twin.Traffic{Packets: 100, PauseTx: 4}); err != nil {
		t.Fatal(err)
	}
	st, cancel := streamOf(t, c, &gnmipb.SubscriptionList{Mode: gnmipb.SubscriptionList_STREAM, Encoding: gnmipb.Encoding_JSON_IETF,
		Subscription: []*gnmipb.Subscription{{Path: p(t, "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics"),
			Mode: gnmipb.SubscriptionMode_SAMPLE, SampleInterval: uint64(50 * time.Millisecond)}}})
	defer cancel()
	const leaf = "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics/pfc-priority[index=3]/pfc-pause-frames-generated"
	first, _ := recvLeaves(t, st, true)
	if first[leaf] != "4" {
		t.Fatalf("initial values: %s = %q, want 4 (all: %v)", leaf, first[leaf], first)
	}
	if err := tw.Play("ethernet-1/1", 3, twin.Traffic{PauseTx: 6}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got, _ := recvLeaves(t, st, false)
		if got[leaf] == "10" {
			return
		}
	}
	t.Fatalf("no sample with %s = 10 within 5s", leaf)
}

// TestStreamOnChange: ON_CHANGE sends only what changed, and a delete for
// what disappeared.
func TestStreamOnChange(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err := tw.Put(p(t, "/qos/classifiers"), map[string]any{"a": "1", "b": "2"}); err != nil {
		t.Fatal(err)
	}
	st, cancel := streamOf(t, c, &gnmipb.SubscriptionList{Mode: gnmipb.SubscriptionList_STREAM, Encoding: gnmipb.Encoding_JSON_IETF,
		Subscription: []*gnmipb.Subscription{{Path: p(t, "/qos/classifiers"), Mode: gnmipb.SubscriptionMode_ON_CHANGE}}})
	defer cancel()
	first, _ := recvLeaves(t, st, true)
	if len(first) != 2 {
		t.Fatalf("initial values %v, want a and b", first)
	}
	if err := tw.Put(p(t, "/qos/classifiers/b"), "3"); err != nil {
		t.Fatal(err)
	}
	got, _ := recvLeaves(t, st, false)
	if len(got) != 1 || got["/qos/classifiers/b"] != "3" {
		t.Fatalf("after changing b: %v, want only /qos/classifiers/b = 3", got)
	}
	if err := tw.Delete(p(t, "/qos/classifiers/a")); err != nil {
		t.Fatal(err)
	}
	_, del := recvLeaves(t, st, false)
	if len(del) != 1 || del[0] != "/qos/classifiers/a" {
		t.Fatalf("after deleting a: deletes %v, want [/qos/classifiers/a]", del)
	}
}

// TestStreamSONiCCounters: SONiC answers a COUNTERS_DB subscription with
// one JSON value per subscribed path, as sonic-gnmi does; pause counters
// are strings, as in the COUNTERS_DB hash.
func TestStreamSONiCCounters(t *testing.T) {
	tw, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSONiC})
	if err := tw.Play("Ethernet0", 3, twin.Traffic{Drops: 2, PauseRx: 5}); err != nil {
		t.Fatal(err)
	}
	st, cancel := streamOf(t, c, &gnmipb.SubscriptionList{Mode: gnmipb.SubscriptionList_STREAM, Encoding: gnmipb.Encoding_JSON_IETF,
		Prefix: &gnmipb.Path{Target: "COUNTERS_DB"},
		Subscription: []*gnmipb.Subscription{{Path: p(t, "/COUNTERS/Ethernet0/Queues"),
			Mode: gnmipb.SubscriptionMode_SAMPLE, SampleInterval: uint64(time.Second)}}})
	defer cancel()
	got, _ := recvLeaves(t, st, true)
	v := got["/COUNTERS/Ethernet0/Queues"]
	if !strings.Contains(v, `"SAI_QUEUE_STAT_DROPPED_PACKETS":"2"`) {
		t.Fatalf("queues = %s, want SAI_QUEUE_STAT_DROPPED_PACKETS \"2\" for Ethernet0:3", v)
	}
}

func TestStreamRefusesTinyInterval(t *testing.T) {
	_, c := client(t, twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	st, cancel := streamOf(t, c, &gnmipb.SubscriptionList{Mode: gnmipb.SubscriptionList_STREAM, Encoding: gnmipb.Encoding_JSON_IETF,
		Subscription: []*gnmipb.Subscription{{Path: p(t, "/qos"), Mode: gnmipb.SubscriptionMode_SAMPLE, SampleInterval: 1000}}})
	defer cancel()
	if _, err := st.Recv(); err == nil || !strings.Contains(err.Error(), "below the target's minimum") {
		t.Fatalf("err = %v, want a sample_interval below the minimum refusal", err)
	}
}

func TestRateModel(t *testing.T) {
	tw, err := twin.New(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := tw.Rate("ethernet-1/1", 3, twin.Traffic{PauseTx: 1000}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	v, _ := tw.Value(p(t, "/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics/pfc-priority[index=3]/pfc-pause-frames-generated"))
	n, _ := jtree.Int(v)
	// 1000/s for ~0.3s; the ticker may run late on a busy machine.
	if n < 100 || n > 400 {
		t.Fatalf("pause frames after 0.3s at 1000/s = %d, want about 300", n)
	}
	if _, err := tw.Rate("ethernet-1/1", 9, twin.Traffic{}, 0); err == nil {
		t.Fatal("priority 9 accepted")
	}
}
