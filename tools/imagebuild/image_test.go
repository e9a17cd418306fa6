package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The release these tests build: a tag and a revision no real release has,
// and a fixed SOURCE_DATE_EPOCH.
const (
	testVersion  = "v0.0.0-imagetest"
	testRevision = "0123456789abcdef0123456789abcdef01234567"
	testEpoch    = 1700000000
)

var platforms = []string{"linux/amd64", "linux/arm64"}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "fabricctl")); err != nil {
		t.Fatalf("repository root not found from tools/imagebuild: %v", err)
	}
	return root
}

var release struct {
	once   sync.Once
	dir    string
	digest string // what imagebuild printed
	err    error
}

var testTmp string

func TestMain(m *testing.M) {
	var err error
	testTmp, err = os.MkdirTemp("", "imagebuild-test-")
	if err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(testTmp)
	os.Exit(code)
}

// buildRelease runs scripts/build-release.sh --image once for all tests: the
// same command the release workflow runs.
func buildRelease(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	release.once.Do(func() {
		release.dir = filepath.Join(testTmp, "dist")
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "build-release.sh"), "--image", testVersion, release.dir)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "REVISION="+testRevision, "SOURCE_DATE_EPOCH=1700000000")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			release.err = errors.New("scripts/build-release.sh: " + err.Error() + "\n" + stderr.String())
			return
		}
		release.digest = strings.TrimSpace(string(out))
	})
	if release.err != nil {
		t.Fatal(release.err)
	}
	return release.dir
}

func TestReleaseBinariesAreStaticAndStamped(t *testing.T) {
	dist := buildRelease(t)
	// The checksum file verifies the way the README tells users to.
	cmd := exec.Command("sha256sum", "-c", "SHA256SUMS")
	cmd.Dir = dist
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}
	for _, p := range platforms {
		arch := strings.TrimPrefix(p, "linux/")
		bin := filepath.Join(dist, "fabricctl_linux_"+arch)
		bi, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": "linux", "GOARCH": arch} {
			if settings[k] != want {
				t.Errorf("%s: build setting %s = %q, want %q", bin, k, settings[k], want)
			}
		}
		// With -trimpath the build info omits -ldflags, so look for the
		// stamped strings in the binary itself (the amd64 one runs below).
		body, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []string{testVersion, testRevision} {
			if !bytes.Contains(body, []byte(x)) {
				t.Errorf("%s: %s is not stamped into the binary (-ldflags -X)", bin, x)
			}
		}
		if bi.Path != "github.com/fabricctl/fabricctl/cmd/fabricctl" {
			t.Errorf("%s: main package %q", bin, bi.Path)
		}
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		out, err := exec.Command(filepath.Join(dist, "fabricctl_linux_amd64"), "version").CombinedOutput()
		if err != nil {
			t.Fatalf("fabricctl version: %v\n%s", err, out)
		}
		for _, want := range []string{testVersion, testRevision} {
			if !strings.Contains(string(out), want) {
				t.Errorf("fabricctl version printed %q; want it to name %s", out, want)
			}
		}
	}
}

func TestImageFromTarball(t *testing.T) {
	dist := buildRelease(t)
	epoch := time.Unix(testEpoch, 0).UTC()
	for _, p := range platforms {
		arch := strings.TrimPrefix(p, "linux/")
		t.Run(arch, func(t *testing.T) {
			tarPath := filepath.Join(dist, "fabricctl_image_linux_"+arch+".tar")
			if tags := dockerArchiveTags(t, tarPath); len(tags) != 1 || tags[0] != DefaultRepository+":"+testVersion {
				t.Errorf("%s: manifest.json RepoTags %q, want [%s:%s]", tarPath, tags, DefaultRepository, testVersion)
			}
			img, err := tarball.ImageFromPath(tarPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != "linux" || cf.Architecture != arch {
				t.Errorf("platform %s/%s, want %s", cf.OS, cf.Architecture, p)
			}
			if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != "/usr/local/bin/fabricctl" {
				t.Errorf("entrypoint %q, want [/usr/local/bin/fabricctl]", got)
			}
			if len(cf.Config.Cmd) != 0 {
				t.Errorf("cmd %q, want none (arguments come from the pod spec)", cf.Config.Cmd)
			}
			if cf.Config.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532 (non-root)", cf.Config.User)
			}
			for k, want := range map[string]string{
				"org.opencontainers.image.source":   "https://github.com/fabricctl/fabricctl",
				"org.opencontainers.image.revision": testRevision,
				"org.opencontainers.image.version":  testVersion,
				"org.opencontainers.image.created":  "2023-11-14T22:13:20Z",
				"org.opencontainers.image.licenses": "Apache-2.0",
			} {
				if got := cf.Config.Labels[k]; got != want {
					t.Errorf("label %s = %q, want %q", k, got, want)
				}
			}
			if !cf.Created.Time.Equal(epoch) {
				t.Errorf("created %v, want SOURCE_DATE_EPOCH %v", cf.Created.Time, epoch)
			}
			files := layerFiles(t, img)
			want, err := os.ReadFile(filepath.Join(dist, "fabricctl_linux_"+arch))
			if err != nil {
				t.Fatal(err)
			}
			bin, ok := files["usr/local/bin/fabricctl"]
			if !ok {
				t.Fatalf("no usr/local/bin/fabricctl in the image; files: %v", keys(files))
			}
			if !bytes.Equal(bin.body, want) {
				t.Errorf("the binary in the image (%d bytes) differs from dist/fabricctl_linux_%s (%d bytes)", len(bin.body), arch, len(want))
			}
			if bin.hdr.Mode != 0o755 || bin.hdr.Uid != 0 {
				t.Errorf("binary mode %o uid %d, want 755 owned by root", bin.hdr.Mode, bin.hdr.Uid)
			}
			for n, f := range files {
				if !f.hdr.ModTime.Equal(epoch) {
					t.Errorf("%s: mtime %v, want SOURCE_DATE_EPOCH", n, f.hdr.ModTime)
				}
			}
			if pw := string(files["etc/passwd"].body); !strings.Contains(pw, "nonroot:x:65532:65532:") {
				t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", pw)
			}
			if files["tmp/"].hdr.Mode != 0o1777 {
				t.Errorf("/tmp mode %o, want 1777", files["tmp/"].hdr.Mode)
			}
			skopeoInspect(t, "docker-archive:"+tarPath, arch)
		})
	}
}

func TestOCILayoutIsAMultiPlatformIndex(t *testing.T) {
	dist := buildRelease(t)
	p, err := layout.FromPath(filepath.Join(dist, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json: want one OCI image index, got %+v", im.Manifests)
	}
	if got := im.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; got != testVersion {
		t.Errorf("index.json ref.name %q, want %s", got, testVersion)
	}
	if got := im.Manifests[0].Digest.String(); got != release.digest {
		t.Errorf("layout holds index %s, imagebuild printed %s", got, release.digest)
	}
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Manifests {
		got = append(got, d.Platform.String())
		if d.MediaType != types.OCIManifestSchema1 {
			t.Errorf("%s: media type %s", d.Platform, d.MediaType)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != d.Platform.Architecture {
			t.Errorf("index says %s, config says %s", d.Platform, cf.Architecture)
		}
	}
	if strings.Join(got, ",") != strings.Join(platforms, ",") {
		t.Errorf("platforms %v, want %v", got, platforms)
	}
	if m.Annotations["org.opencontainers.image.revision"] != testRevision {
		t.Errorf("index annotations %v lack the revision", m.Annotations)
	}
	skopeoInspect(t, "oci-archive:"+filepath.Join(dist, "fabricctl_oci.tar")+":"+testVersion, "")
}

// Two builds from the same binaries give the same bytes: the index digest
// the script printed equals the one built here again, in process.
func TestImageIsReproducible(t *testing.T) {
	dist := buildRelease(t)
	bins := map[string]string{}
	for _, p := range platforms {
		bins[p] = filepath.Join(dist, "fabricctl_linux_"+strings.TrimPrefix(p, "linux/"))
	}
	o := Options{Binaries: bins, Version: testVersion, Revision: testRevision, Epoch: time.Unix(testEpoch, 0).UTC()}
	res, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	d, err := res.Index.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d.String() != release.digest {
		t.Errorf("second build: index %s, first build %s", d, release.digest)
	}
	// A different revision must give a different image (the labels change).
	o.Revision = strings.Repeat("f", 40)
	res2, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if d2, _ := res2.Index.Digest(); d2 == d {
		t.Errorf("changing the revision did not change the digest %s", d)
	}
	// The OCI tar of a second Write is byte-identical too.
	dir := t.TempDir()
	if err := Write(res, dir, "", testVersion); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dist, "fabricctl_oci.tar"))
	b, _ := os.ReadFile(filepath.Join(dir, "fabricctl_oci.tar"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("fabricctl_oci.tar differs between two builds (%d vs %d bytes)", len(a), len(b))
	}
}

func TestBuildRejectsBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"no binary":     {"--version", "v1.0.0", "--revision", "abc", "--out", t.TempDir()},
		"no version":    {"--binary", "linux/amd64=/bin/true", "--revision", "abc", "--out", t.TempDir()},
		"not linux":     {"--binary", "darwin/arm64=/bin/true", "--version", "v1", "--revision", "abc", "--out", t.TempDir()},
		"bad binary":    {"--binary", "linux/amd64", "--version", "v1", "--revision", "abc", "--out", t.TempDir()},
		"missing file":  {"--binary", "linux/amd64=/nonexistent/fabricctl", "--version", "v1", "--revision", "abc", "--out", t.TempDir()},
		"nothing to do": {"--binary", "linux/amd64=/bin/true", "--version", "v1", "--revision", "abc"},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("%s: imagebuild %v succeeded", name, args)
		}
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if err := run([]string{"--binary", "linux/amd64=/bin/true", "--version", "v1", "--revision", "abc", "--out", t.TempDir()}, io.Discard); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("bad SOURCE_DATE_EPOCH: err %v", err)
	}
}

// docker load / podman load, where this machine has them (the GitHub runner
// has Docker; this sandbox has neither, and says so).
func TestLoadWithContainerEngine(t *testing.T) {
	dist := buildRelease(t)
	arch := runtime.GOARCH
	tarPath := filepath.Join(dist, "fabricctl_image_linux_"+arch+".tar")
	ran := false
	for _, engine := range []string{"docker", "podman"} {
		if _, err := exec.LookPath(engine); err != nil {
			continue
		}
		if err := exec.Command(engine, "info").Run(); err != nil {
			t.Logf("%s is installed but not usable (%v)", engine, err)
			continue
		}
		ran = true
		out, err := exec.Command(engine, "load", "-i", tarPath).CombinedOutput()
		if err != nil {
			t.Fatalf("%s load: %v\n%s", engine, err, out)
		}
		ref := DefaultRepository + ":" + testVersion
		out, err = exec.Command(engine, "run", "--rm", ref, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s run %s version: %v\n%s", engine, ref, err, out)
		}
		if !strings.Contains(string(out), testVersion) || !strings.Contains(string(out), testRevision) {
			t.Errorf("%s run %s version printed %q", engine, ref, out)
		}
		_ = exec.Command(engine, "rmi", ref).Run()
	}
	if !ran {
		t.Skip("no usable docker or podman here: the tarball is checked by go-containerregistry and skopeo instead")
	}
}

type tarFile struct {
	hdr  *tar.Header
	body []byte
}

func layerFiles(t *testing.T, img v1.Image) map[string]tarFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1 (no base image)", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]tarFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = tarFile{hdr: h, body: body}
	}
	return files
}

func dockerArchiveTags(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no manifest.json (%v): not a docker-archive", path, err)
		}
		if h.Name != "manifest.json" {
			continue
		}
		var m []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			t.Fatalf("%s: manifest.json: %v", path, err)
		}
		if len(m) != 1 {
			t.Fatalf("%s: manifest.json lists %d images, want 1", path, len(m))
		}
		return m[0].RepoTags
	}
}

// skopeoInspect reads the archive with skopeo (containers/image: the code
// podman load uses), an implementation independent of the one that wrote it.
func skopeoInspect(t *testing.T, ref, arch string) {
	t.Helper()
	if _, err := exec.LookPath("skopeo"); err != nil {
		if os.Getenv("CI") != "" {
			t.Errorf("skopeo not installed (scripts/install-deps.sh installs it)")
		}
		t.Logf("skopeo not installed: not cross-checking %s", ref)
		return
	}
	args := []string{"inspect", "--config", ref}
	if arch == "" {
		args = []string{"--override-arch", runtime.GOARCH, "inspect", "--config", ref}
	}
	out, err := exec.Command("skopeo", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("skopeo %v: %v\n%s", args, err, out)
	}
	var cf v1.ConfigFile
	if err := json.Unmarshal(out, &cf); err != nil {
		t.Fatalf("skopeo %v: %v\n%s", args, err, out)
	}
	if arch == "" {
		arch = runtime.GOARCH
	}
	if cf.Architecture != arch || cf.Config.Labels["org.opencontainers.image.version"] != testVersion {
		t.Errorf("skopeo %v: architecture %q labels %v", args, cf.Architecture, cf.Config.Labels)
	}
}

func keys(m map[string]tarFile) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return s
}
