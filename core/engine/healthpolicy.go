package engine

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/plugins/sdk"
)

// A health policy (senlin.policy.health) leaves its registry entry in its
// binding's data; the health loop follows it for the cluster: its interval
// between checks, its detection modes (node status from the driver's check,
// a URL per node), its recovery conditional and node_update_timeout, and
// its recovery action.

// Detection modes the loop knows.
const (
	modeStatus    = "NODE_STATUS_POLLING"
	modeURL       = "NODE_STATUS_POLL_URL"
	modeLifecycle = "LIFECYCLE_EVENTS"
	modeHost      = "HYPERVISOR_STATUS_POLLING"
)

// healthRegistry returns the registry entry of the cluster's enabled
// health policy, if it has one.
func (e *Engine) healthRegistry(ctx context.Context, cl *model.Cluster) (model.HealthRegistry, bool, error) {
	var reg model.HealthRegistry
	bindings, err := e.store.ListBindings(ctx, cl.ID)
	if err != nil {
		return reg, false, err
	}
	for _, b := range bindings {
		raw, ok := b.Data["health"]
		if !b.Enabled || !ok {
			continue
		}
		if err := decodeDoc(raw, &reg); err != nil {
			return reg, false, fmt.Errorf("The health policy bound to cluster '%s' has a registry Grove cannot read: %s.", cl.Name, docError("health", err))
		}
		return reg, true, nil
	}
	return reg, false, nil
}

// healthDue says whether a cluster under a health policy is due for a
// check at now, and records the check when it is.
func (e *Engine) healthDue(clusterID string, reg model.HealthRegistry, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	last, ok := e.healthLast[clusterID]
	if ok && now.Sub(last) < time.Duration(reg.Interval)*time.Second {
		return false
	}
	e.healthLast[clusterID] = now
	return true
}

// policyVerdicts applies the registry's detection modes to the nodes the
// driver checked: each node's verdict and, when unhealthy, why.
func (e *Engine) policyVerdicts(ctx context.Context, reg model.HealthRegistry, profileType string, nodes []*model.Node, checked map[string]sdk.Result, now time.Time) (map[string]bool, map[string]string) {
	status := len(reg.DetectionModes) == 0
	var down map[string]string
	var url *model.HealthMode
	for i, m := range reg.DetectionModes {
		switch m.Type {
		case modeStatus, modeLifecycle:
			// Driver events are Grove's lifecycle events; the check
			// confirms what they report.
			status = true
		case modeURL:
			url = &reg.DetectionModes[i]
		case modeHost:
			down = e.hostsDown(ctx, profileType)
		}
	}
	urlFailed := map[string]string{}
	if url != nil {
		urlFailed = e.pollURLs(ctx, *url, nodes)
	}
	healthy := map[string]bool{}
	reasons := map[string]string{}
	for _, n := range nodes {
		r, ok := checked[n.ID]
		if !ok {
			continue
		}
		modes := orchestrator.HealthModes{}
		var why []string
		if status {
			modes[modeStatus] = !r.Healthy
			if !r.Healthy {
				why = append(why, r.Reason)
			}
		}
		if down != nil {
			h := nodeHost(n)
			reason, failed := down[h]
			modes[modeHost] = failed
			if failed {
				why = append(why, fmt.Sprintf("host %s is %s", h, reason))
			}
		}
		if url != nil {
			reason, failed := urlFailed[n.ID]
			modes[modeURL] = failed
			if failed {
				why = append(why, reason)
			}
		}
		updated := n.InitAt
		if n.UpdatedAt != nil {
			updated = *n.UpdatedAt
		} else if n.CreatedAt != nil {
			updated = *n.CreatedAt
		}
		grace := n.Status == model.NodeActive && now.Sub(updated) < time.Duration(reg.NodeUpdateTimeout)*time.Second
		bad := orchestrator.Unhealthy(modes, reg.RecoveryConditional, grace)
		healthy[n.ID] = !bad
		if bad {
			reasons[n.ID] = strings.Join(why, "; ")
		}
	}
	return healthy, reasons
}

// hostsDown lists the hosts of a profile type's driver that are down or
// disabled (a Nova hypervisor's state "down" or status "disabled"), by
// name and by compute host, with what is wrong with each. A driver that
// cannot be asked finds none down: Senlin takes a failed check as healthy,
// so a cloud that does not answer does not recover every node.
func (e *Engine) hostsDown(ctx context.Context, profileType string) map[string]string {
	var hosts []sdk.Host
	err := e.plugins.Call(ctx, "profile", profileType, func(ctx context.Context, c *sdk.Client) (err error) {
		hosts, err = c.Hosts(ctx, profileType)
		return err
	})
	out := map[string]string{}
	if err != nil {
		e.log.Warn("hypervisor status polling: the hosts cannot be listed", "type", profileType, "error", err)
		return out
	}
	for _, h := range hosts {
		var what []string
		if h.Attributes["state"] == "down" {
			what = append(what, "down")
		}
		if h.Attributes["status"] == "disabled" {
			what = append(what, "disabled")
		}
		if h.Err != "" || len(what) == 0 {
			continue
		}
		out[h.Name] = strings.Join(what, " and ")
		if c := h.Attributes["host"]; c != "" {
			out[c] = out[h.Name]
		}
	}
	return out
}

// nodeHost is the host a node's data says it runs on: a Nova server's
// hypervisor, else the driver's host.
func nodeHost(n *model.Node) string {
	if h, _ := n.Data["hypervisor_hostname"].(string); h != "" {
		return h
	}
	h, _ := n.Data["host"].(string)
	return h
}

// pollURLs polls the mode's URL for each ACTIVE node at once and returns
// why each failing node failed.
func (e *Engine) pollURLs(ctx context.Context, m model.HealthMode, nodes []*model.Node) map[string]string {
	o := m.Options
	client := &http.Client{Timeout: 10 * time.Second}
	if !o.PollURLSSLVerify {
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // #nosec G402 -- the policy asks for it
	}
	re, err := regexp.Compile(o.PollURLHealthyResponse)
	if err != nil {
		re = regexp.MustCompile(regexp.QuoteMeta(o.PollURLHealthyResponse))
	}
	out := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, n := range nodes {
		if n.Status != model.NodeActive && n.Status != model.NodeError {
			// Senlin polls ACTIVE nodes; a node the loop found dead is
			// polled too, so that it is seen back only when its URL is.
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			url := strings.ReplaceAll(o.PollURL, "{nodename}", n.Name)
			if reason, failed := pollURL(ctx, client, url, re, o.PollURLRetryLimit, time.Duration(o.PollURLRetryInterval)*time.Second, o.PollURLConnErrorAsUnhealthy); failed {
				mu.Lock()
				out[n.ID] = reason
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// pollURL is Senlin's URL health check: up to limit attempts, interval
// apart; a response whose body matches re is healthy, a connection error
// is unhealthy only when connErrUnhealthy says so. It returns why the node
// failed, and whether it did.
func pollURL(ctx context.Context, client *http.Client, url string, re *regexp.Regexp, limit int, interval time.Duration, connErrUnhealthy bool) (string, bool) {
	for attempt := 1; attempt <= limit; attempt++ {
		body, err := fetch(ctx, client, url)
		var reason string
		switch {
		case err != nil && !connErrUnhealthy:
			return "", false
		case err != nil:
			reason = fmt.Sprintf("poll URL %s: %v", url, err)
		case !re.MatchString(body):
			reason = fmt.Sprintf("poll URL %s: the response does not match %q", url, re.String())
		default:
			return "", false
		}
		if attempt == limit {
			return reason, true
		}
		if err := sleepCtx(ctx, interval); err != nil {
			return "", false
		}
	}
	return "", false
}

func fetch(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// Senlin's url_fetch raises for an error status as for a
		// connection error.
		return "", fmt.Errorf("it answered %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(b), err
}
