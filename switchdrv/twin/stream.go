package twin

import (
	"slices"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// Subscribe STREAM, as the gNMI specification (3.5.1.5.2) describes it:
//
//   - the target first sends the current value of every subscribed path
//     (unless updates_only), then one sync_response;
//   - SAMPLE subscriptions then resend their paths every sample_interval
//     (0 = the lowest interval the target supports: DefaultSampleInterval
//     here);
//   - ON_CHANGE (and TARGET_DEFINED, which the twin serves as ON_CHANGE)
//     send only the values that changed, and a delete for each path that
//     disappeared; heartbeat_interval, when set, resends everything.
//
// Values have the same shape as the twin's ONCE answers: leaf by leaf on
// the OpenConfig-style targets (SR Linux, EOS, OpenConfig), one JSON value
// per subscribed path on SONiC (sonic-gnmi sends a table or hash whole).
// The twin notices changes by polling its datastore every OnChangePoll,
// which bounds how late an ON_CHANGE update can be. While Hang is on,
// open streams send nothing (a wedged management plane).
const (
	DefaultSampleInterval = 100 * time.Millisecond
	MinSampleInterval     = 10 * time.Millisecond
	OnChangePoll          = 25 * time.Millisecond
)

type streamSub struct {
	sub       *gnmipb.Subscription
	onChange  bool
	interval  time.Duration // SAMPLE interval, or ON_CHANGE heartbeat (0 = none)
	next      time.Time     // next sample or heartbeat
	last      map[string]*gnmipb.Update
	lastOrder []string
}

func (s *server) subscribeStream(stream gnmipb.GNMI_SubscribeServer, sl *gnmipb.SubscriptionList) error {
	t := s.t
	ctx := stream.Context()
	now := time.Now()
	subs := make([]*streamSub, 0, len(sl.GetSubscription()))
	for _, sub := range sl.GetSubscription() {
		p := join(sl.GetPrefix(), sub.GetPath())
		if err := t.check(p, false); err != nil {
			return err
		}
		ss := &streamSub{sub: sub}
		switch sub.GetMode() {
		case gnmipb.SubscriptionMode_SAMPLE:
			ss.interval = time.Duration(sub.GetSampleInterval())
			if ss.interval == 0 {
				ss.interval = DefaultSampleInterval
			}
			if ss.interval < MinSampleInterval {
				return status.Errorf(codes.InvalidArgument, "path %s: sample_interval %s is below the target's minimum %s",
					jtree.PathKey(p), ss.interval, MinSampleInterval)
			}
		case gnmipb.SubscriptionMode_ON_CHANGE, gnmipb.SubscriptionMode_TARGET_DEFINED:
			ss.onChange = true
			ss.interval = time.Duration(sub.GetHeartbeatInterval())
		default:
			return status.Errorf(codes.InvalidArgument, "path %s: unknown subscription mode %s", jtree.PathKey(p), sub.GetMode())
		}
		ss.next = now.Add(ss.interval)
		subs = append(subs, ss)
	}
	// Later requests on a STREAM subscription carry nothing the target
	// must act on; read them so the client's CloseSend is noticed.
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				return
			}
		}
	}()
	send := func(n *gnmipb.Notification) error {
		if len(n.GetUpdate()) == 0 && len(n.GetDelete()) == 0 {
			return nil
		}
		return stream.Send(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_Update{Update: n}})
	}
	for _, ss := range subs {
		cur, order, err := t.current(sl, ss.sub)
		if err != nil {
			return err
		}
		ss.last, ss.lastOrder = cur, order
		if sl.GetUpdatesOnly() {
			continue
		}
		if err := send(notification(sl, cur, order, nil)); err != nil {
			return err
		}
	}
	if err := stream.Send(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		now := time.Now()
		wake := now.Add(time.Hour)
		t.mu.Lock()
		hung := t.hang
		t.mu.Unlock()
		for _, ss := range subs {
			if hung {
				// A wedged management plane (Hang) streams nothing.
				wake = now.Add(OnChangePoll)
				break
			}
			due := ss.interval > 0 && !now.Before(ss.next)
			if ss.onChange || due {
				cur, order, err := t.current(sl, ss.sub)
				if err != nil {
					return err
				}
				var n *gnmipb.Notification
				switch {
				case due:
					// A sample, or an ON_CHANGE heartbeat: everything.
					n = notification(sl, cur, order, nil)
				default:
					var changed []string
					for _, k := range order {
						if old, ok := ss.last[k]; !ok || !proto.Equal(old.GetVal(), cur[k].GetVal()) {
							changed = append(changed, k)
						}
					}
					var gone []*gnmipb.Path
					for _, k := range ss.lastOrder {
						if _, ok := cur[k]; !ok {
							gone = append(gone, ss.last[k].GetPath())
						}
					}
					n = notification(sl, cur, changed, gone)
				}
				ss.last, ss.lastOrder = cur, order
				if err := send(n); err != nil {
					return err
				}
				if due {
					for !now.Before(ss.next) {
						ss.next = ss.next.Add(ss.interval)
					}
				}
			}
			if ss.interval > 0 && ss.next.Before(wake) {
				wake = ss.next
			}
			if ss.onChange && now.Add(OnChangePoll).Before(wake) {
				wake = now.Add(OnChangePoll)
			}
		}
		timer.Reset(time.Until(wake))
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-timer.C:
		}
	}
}

// current reads the value of one subscription, as updates keyed by path.
func (t *Twin) current(sl *gnmipb.SubscriptionList, sub *gnmipb.Subscription) (map[string]*gnmipb.Update, []string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := join(sl.GetPrefix(), sub.GetPath())
	out := map[string]*gnmipb.Update{}
	var order []string
	v, ok := t.lookup(t.namespace(p), p.GetElem(), gnmipb.GetRequest_ALL, nil)
	if !ok {
		return out, order, nil
	}
	add := func(u *gnmipb.Update) {
		k := jtree.PathKey(u.GetPath())
		out[k] = u
		order = append(order, k)
	}
	if t.prof.leafSubscribe {
		walkLeaves(v, sub.GetPath().GetElem(), func(elems []*gnmipb.PathElem, leaf any) {
			add(&gnmipb.Update{Path: &gnmipb.Path{Origin: sub.GetPath().GetOrigin(), Elem: slices.Clone(elems)}, Val: scalar(leaf)})
		})
		return out, order, nil
	}
	tv := scalar(v)
	if _, isObj := v.(map[string]any); isObj {
		var err error
		if tv, err = encode(v, sl.GetEncoding()); err != nil {
			return nil, nil, status.Errorf(codes.Internal, "%v", err)
		}
	}
	add(&gnmipb.Update{Path: sub.GetPath(), Val: tv})
	return out, order, nil
}

func notification(sl *gnmipb.SubscriptionList, cur map[string]*gnmipb.Update, keys []string, gone []*gnmipb.Path) *gnmipb.Notification {
	n := &gnmipb.Notification{Timestamp: time.Now().UnixNano(), Prefix: sl.GetPrefix(), Delete: gone}
	for _, k := range keys {
		n.Update = append(n.Update, cur[k])
	}
	return n
}
