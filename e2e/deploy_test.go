package e2e

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkherd/zkherd/internal/exit"

	"go.yaml.in/yaml/v3"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// moduleRoot is the repository root, where the Dockerfile builds.
const moduleRoot = ".."

var k8sDir = filepath.Join(moduleRoot, "docs", "deploy", "kubernetes")

// discoveryStub answers kubectl's API discovery for batch/v1 Job, the
// kind the manifests hold, and "not found" to everything else (the Job
// does not exist yet): what kubectl apply --dry-run=client needs from a
// server to map a kind to its resource.
func discoveryStub() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/version":
			fmt.Fprint(w, `{"major":"1","minor":"32","gitVersion":"v1.32.0"}`)
		case "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`)
		case "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"batch","versions":[{"groupVersion":"batch/v1","version":"v1"}],"preferredVersion":{"groupVersion":"batch/v1","version":"v1"}}]}`)
		case "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[]}`)
		case "/apis/batch/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"batch/v1","resources":[{"name":"jobs","singularName":"job","namespaced":true,"kind":"Job","verbs":["create","delete","get","list","patch","update","watch"]}]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
		}
	})
}

// kubectlDryRun runs kubectl apply --dry-run=client --validate=false on
// manifest against the discovery stub.
func kubectlDryRun(t *testing.T, manifest string) (string, error) {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl: %v (scripts/setup.sh installs Debian's kubernetes-client)", err)
	}
	srv := httptest.NewServer(discoveryStub())
	defer srv.Close()
	home := t.TempDir()
	kubeconfig := filepath.Join(home, "config")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: stub, cluster: {server: %q}}]
contexts: [{name: stub, context: {cluster: stub, namespace: default}}]
current-context: stub
users: []
`, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kubectl, "apply", "--dry-run=client", "--validate=false", "-f", manifest)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// job is what TestKubernetesJob reads of job.yaml.
type job struct {
	Kind string `yaml:"kind"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		BackoffLimit   *int   `yaml:"backoffLimit"`
		Template       struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Args []string `yaml:"args"`
					Env  []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom struct {
							FieldRef struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestKubernetesJob checks docs/deploy/kubernetes/job.yaml: kubectl
// accepts it (client-side dry run), it is a consistent Indexed Job, and
// its arguments, one process per completion index, run a distributed run
// against a real ZooKeeper.
func TestKubernetesJob(t *testing.T) {
	inLane(t, commandLane)
	manifest := filepath.Join(k8sDir, "job.yaml")
	out, err := kubectlDryRun(t, manifest)
	if err != nil || !strings.Contains(out, "job.batch/zkherd-load created (dry run)") {
		t.Errorf("kubectl apply --dry-run=client: %v\n%s", err, out)
	}
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, bytes.Replace(data, []byte("kind: Job"), []byte("kind: Jobb"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectlDryRun(t, broken); err == nil {
		t.Errorf("kubectl accepted a manifest of an unknown kind:\n%s", out)
	}

	var j job
	if err := yaml.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	s := j.Spec
	if j.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism != s.Completions ||
		s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.Template.Spec.RestartPolicy != "Never" || len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("job.yaml: %+v; want an Indexed Job, completions = parallelism >= 2, backoffLimit 0, restartPolicy Never, one container", s)
	}
	c := s.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value + e.ValueFrom.FieldRef.FieldPath
	}
	if env["RUN_ID"] != "metadata.labels['batch.kubernetes.io/controller-uid']" || env["INDEX"] != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env %v: want RUN_ID from the Job's uid label, INDEX from the completion index annotation", env)
	}
	for _, want := range []string{"--run-id=$(RUN_ID)", "--index=$(INDEX)", "--server=$(ZK_SERVER)", fmt.Sprintf("--processes=%d", s.Completions)} {
		if !strings.Contains(strings.Join(c.Args, " "), want) {
			t.Errorf("args %q have no %s", c.Args, want)
		}
	}

	// The pods' arguments, as Kubernetes expands them, run: the others
	// first (they wait), index 0 last; short and into a temporary
	// directory (later flags win).
	ens := enstest.Start(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results := filepath.Join(t.TempDir(), "results")
	uid := fmt.Sprintf("0f4c2a1e-%d-4b5d-9c1e-2f1d3c4b5a6e", os.Getpid())
	args := func(index int) []string {
		expand := strings.NewReplacer("$(RUN_ID)", uid, "$(INDEX)", fmt.Sprint(index), "$(ZK_SERVER)", ens.ConnectString())
		var a []string
		for _, arg := range c.Args {
			a = append(a, expand.Replace(arg))
		}
		return append(a, "--clients=2", "--duration=1s", "--out="+results)
	}
	type res struct {
		stdout, stderr string
		err            error
	}
	got := make([]res, s.Completions)
	bin := checkedBin(t)
	var wg sync.WaitGroup
	for i := s.Completions - 1; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, e, err := runZkherd(ctx, bin, args(i)...)
			got[i] = res{o, e, err}
		}()
	}
	wg.Wait()
	for i, r := range got {
		if r.err != nil {
			t.Errorf("pod %d: %v\nstdout:\n%s\nstderr:\n%s", i, r.err, r.stdout, r.stderr)
		}
	}
	rep, err := os.ReadFile(filepath.Join(results, "report.json"))
	if err != nil {
		t.Fatalf("pod 0 wrote no report: %v", err)
	}
	var r struct {
		Title string `json:"title"`
	}
	if err := json.Unmarshal(rep, &r); err != nil || r.Title != fmt.Sprintf("fair-lock, %d processes", s.Completions) {
		t.Errorf("report.json title %q (%v), want fair-lock over %d processes", r.Title, err, s.Completions)
	}
}

// dockerfileBuild is the Dockerfile's go build command.
func dockerfileBuild(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k8sDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if cmd, ok := strings.CutPrefix(l, "RUN "); ok && strings.Contains(cmd, "go build") {
			return cmd
		}
	}
	t.Fatal("the Dockerfile has no RUN ... go build line")
	return ""
}

// TestImageBinaryStarts builds the image's binary with the Dockerfile's
// own command and runs it alone in an empty root, as the scratch image
// would (chroot, as the image's user), since CI has no Docker engine.
func TestImageBinaryStarts(t *testing.T) {
	inLane(t, commandLane)
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root (CI runs as root)")
	}
	build := dockerfileBuild(t)
	if !strings.Contains(build, "CGO_ENABLED=0") || !strings.Contains(build, "-o /out/zkherd") {
		t.Fatalf("Dockerfile build %q: want CGO_ENABLED=0 and -o /out/zkherd (the path COPY takes)", build)
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", strings.Replace(build, "/out/zkherd", filepath.Join(root, "zkherd"), 1))
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	f, err := elf.Open(filepath.Join(root, "zkherd"))
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary asks for an ELF interpreter: not static")
		}
	}
	f.Close()
	if len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v: not static", libs)
	}
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the root holds %v (%v), want the binary alone", entries, err)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command("chroot", append([]string{"--userspec=65532:65532", root, "/zkherd"}, args...)...)
		cmd.Env = []string{} // scratch: no PATH, no HOME
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("chroot: %v", err)
		}
		return string(out), code
	}
	if out, code := run("version"); code != 0 || !strings.HasPrefix(out, "zkherd ") {
		t.Errorf("zkherd version in the empty root: status %d\n%s", code, out)
	}
	if out, code := run("--help"); code != 0 || !strings.Contains(out, "load") {
		t.Errorf("zkherd --help in the empty root: status %d\n%s", code, out)
	}
	out, code := run("load", "--processes=2", "--run-id=r1", "--index=1", "--server=127.0.0.1:1", "--no-tui")
	if code != exit.Usage || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "127.0.0.1:1") {
		t.Errorf("a joining pod whose --server is closed: status %d\n%s\nwant status %d and one line naming the server", code, out, exit.Usage)
	}
}
