package sonic

import (
	"context"
	"fmt"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// sonic-gnmi serves data that is not in a redis database at target OTHERS
// (sonic_data_client/non_db_client.go path2DataFuncTbl, the same on
// branches 202405 to 202511): /osversion/build is getBuildVersion, the
// JSON {"build_version": "SONiC.<build_version of
// /etc/sonic/sonic_version.yml>", "error": ""} ("sonic.NA" and the error
// when the file cannot be read).
const othersTarget = "OTHERS"

var buildVersionPath = &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "osversion"}, {Name: "build"}}}

// Probe implements switchdrv.Prober: it reads the image's build version,
// records it in d.Build (GCU compares the 8-digit branch in it, gcuOf) and
// holds it against the intent's profile:
//   - the same branch: a note says so;
//   - a later branch: a note (the later branches fabricctl has profiles
//     of accept what an earlier one's config updater allows;
//     TestSONiCDefaultPayloadAcceptedByLaterReleases) naming the profile of
//     the switch's branch, if fabricctl has one;
//   - an earlier branch: an error, since the profile's payload may rely on
//     what that branch's config updater refuses;
//   - no answer or a version that names no branch (master, a private
//     build): a note, and the profile stands.
func (Platform) Probe(ctx context.Context, c *transport.Client, d *switchdrv.Desired) error {
	prof, err := profile.LookupFor(string(d.Platform), d.Profile)
	if err != nil {
		return err
	}
	notes, err := c.GetTarget(ctx, othersTarget, []*gnmipb.Path{buildVersionPath})
	if err != nil {
		d.Notes = append(d.Notes, fmt.Sprintf("SONiC image version not read (%v): planning for profile %s as the intent names it", err, prof.Name))
		return nil
	}
	build, why := buildVersion(notes)
	if build == "" {
		d.Notes = append(d.Notes, fmt.Sprintf("SONiC image version not read (%s): planning for profile %s as the intent names it", why, prof.Name))
		return nil
	}
	d.Build = build
	rel := profile.SONiCRelease(build)
	switch {
	case rel == "":
		d.Notes = append(d.Notes, fmt.Sprintf("SONiC image %s names no release branch: planning for profile %s as the intent names it", build, prof.Name))
	case rel == prof.Release:
		d.Notes = append(d.Notes, fmt.Sprintf("SONiC image %s: branch %s, as profile %s", build, rel, prof.Name))
	case rel > prof.Release:
		n := fmt.Sprintf("SONiC image %s: branch %s, later than profile %s's (the later branches fabricctl has profiles of accept its payloads)", build, rel, prof.Name)
		if p := closestProfile(rel); p != nil && p.Release == rel {
			n += fmt.Sprintf("; switches[].profile: %s plans with what that branch allows", p.Name)
		} else {
			n += "; fabricctl has no profile of that branch"
		}
		d.Notes = append(d.Notes, n)
	default:
		fix := "name a profile of that branch or an earlier one"
		if p := closestProfile(rel); p != nil {
			fix = "set switches[].profile: " + p.Name
		}
		return fmt.Errorf("the switch runs SONiC image %s (branch %s), earlier than profile %s (%s): the payload may rely on what that branch's config updater refuses; %s", build, rel, prof.Name, prof.Release, fix)
	}
	return nil
}

// buildVersion is the build_version of sonic-gnmi's answer without its
// "SONiC." prefix, or "" and why not.
func buildVersion(notes []*gnmipb.Notification) (string, string) {
	var val *gnmipb.TypedValue
	for _, n := range notes {
		if us := n.GetUpdate(); len(us) > 0 {
			val = us[0].GetVal()
			break
		}
	}
	if val == nil {
		return "", "OTHERS /osversion/build: no value"
	}
	v, _, err := jtree.TypedQualified(val)
	if err != nil {
		return "", fmt.Sprintf("OTHERS /osversion/build: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Sprintf("OTHERS /osversion/build is not an object: %s", clip(val))
	}
	if e, _ := m["error"].(string); e != "" {
		return "", "the switch could not read /etc/sonic/sonic_version.yml: " + e
	}
	bv, _ := m["build_version"].(string)
	bv = strings.TrimPrefix(bv, "SONiC.")
	if bv == "" || bv == "sonic.NA" {
		return "", "OTHERS /osversion/build has no build_version"
	}
	return bv, ""
}

// clip is v as text, at most 80 bytes of it (a switch's odd answer, in
// a note).
func clip(v *gnmipb.TypedValue) string {
	s := v.String()
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

// closestProfile is the newest SONiC profile of release rel or earlier.
func closestProfile(rel string) *profile.Profile {
	var best *profile.Profile
	for _, p := range profile.All() {
		if p.Platform == "sonic" && p.Release <= rel && (best == nil || p.Release > best.Release) {
			best = p
		}
	}
	return best
}
