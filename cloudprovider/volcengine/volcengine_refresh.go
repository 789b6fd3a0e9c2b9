package volcengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/refresh"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

// groupRecord is what DescribeScalingGroups last said about one group.
type groupRecord struct {
	cloud volcapi.ScalingGroup
	at    time.Time
	// attempts is Ledger.Attempts at the read; a mutation since re-reads it.
	attempts uint64
	// missing marks a --nodes id the read did not return.
	missing bool
}

// groupCatalog is every group as DescribeScalingGroups last described it. The
// list pages at 50 (volcapi.PageSize): a refresh reads one page in rotation,
// more only for due records, mutated groups or a changed list length.
type groupCatalog struct {
	records map[string]groupRecord
	// pages is the page count of the last complete read, 0 before one.
	pages int
	// total is the list's TotalCount at the last page read.
	total int
	// next is the page the next refresh reads.
	next int
	// pageAt is when each page was last read.
	pageAt map[int]time.Time
	// byID is set, for --nodes with more ids than one filter takes, when the
	// account's whole group list takes more pages than the ids take batches.
	byID bool
	// decided is set once the --nodes read mode is chosen.
	decided bool
}

// catalogRead is one refresh's reads. It works on a copy of the records, so
// a failed call leaves the catalog as it was.
type catalogRead struct {
	m   *manager
	ctx context.Context
	// round is the refresh's freshness round.
	round   refresh.Round
	records map[string]groupRecord
	// read are the pages read this refresh; last is the one ending the list.
	read map[int]bool
	last int
	// seen are the groups some read returned this refresh.
	seen        map[string]bool
	total       int
	totalChange bool
}

// readGroups returns, in id order, every group it may manage; whole reads all.
func (m *manager) readGroups(ctx context.Context, round refresh.Round, whole bool) ([]volcapi.ScalingGroup, error) {
	c := &m.catalog
	r := &catalogRead{m: m, ctx: ctx, round: round, records: maps.Clone(c.records), read: map[int]bool{}, seen: map[string]bool{}, total: c.total}
	if r.records == nil {
		r.records = map[string]groupRecord{}
	}
	var err error
	switch static := m.staticIDs(); {
	case len(static) > 0 && len(static) <= volcapi.MaxFilterIDs:
		// One filtered call is the whole answer.
		err = r.completeByID(static)
	case len(static) > 0 && !c.decided:
		err = r.chooseStaticMode(static)
	case len(static) > 0 && c.byID && whole:
		err = r.completeByID(static)
	case len(static) > 0 && c.byID:
		err = r.rotateByID(static)
	case whole:
		err = r.complete()
	default:
		err = r.rotatePages()
	}
	if err != nil {
		return nil, err
	}
	c.records, c.total = r.records, r.total
	if c.pageAt == nil {
		c.pageAt = map[int]time.Time{}
	}
	for n := range r.read {
		c.pageAt[n] = round.At
	}
	if r.last > 0 {
		c.pages = r.last
		for n := range c.pageAt {
			if n > c.pages {
				delete(c.pageAt, n)
			}
		}
	}
	out := make([]volcapi.ScalingGroup, 0, len(c.records))
	for _, rec := range c.records {
		if !rec.missing {
			out = append(out, rec.cloud)
		}
	}
	slices.SortFunc(out, func(a, b volcapi.ScalingGroup) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// staticIDs returns the --nodes group ids, or nil with auto-discovery.
func (m *manager) staticIDs() []string {
	if len(m.selectors) > 0 {
		return nil
	}
	ids := make([]string, 0, len(m.static))
	for _, s := range m.static {
		if !slices.Contains(ids, s.Name) {
			ids = append(ids, s.Name)
		}
	}
	return ids
}

// attempts returns group id's mutation attempts, 0 when unmanaged (no guard).
func (m *manager) attempts(id string) uint64 {
	if _, managed := m.group(id); !managed {
		return 0
	}
	return m.ledger.Attempts(id)
}

func (r *catalogRead) put(g volcapi.ScalingGroup) {
	r.records[g.ID] = groupRecord{cloud: g, at: r.round.At, attempts: r.m.attempts(g.ID)}
	r.seen[g.ID] = true
}

// page reads one page of the unfiltered list.
func (r *catalogRead) page(n int) error {
	p, err := r.m.api.ScalingGroupsPage(r.ctx, n)
	if err != nil {
		return fmt.Errorf("list scaling groups, page %d: %w", n, err)
	}
	r.read[n] = true
	if p.Last {
		r.last = n
	}
	if p.TotalCount != r.total {
		r.totalChange = true
		r.total = p.TotalCount
	}
	for _, g := range p.Groups {
		r.put(g)
	}
	return nil
}

// complete reads the pages left unread and drops the groups no page returned.
func (r *catalogRead) complete() error {
	for n := 1; r.last == 0 || n <= r.last; n++ {
		if n > volcapi.MaxPages {
			return fmt.Errorf("list scaling groups: more than %d pages", volcapi.MaxPages)
		}
		if !r.read[n] {
			if err := r.page(n); err != nil {
				return err
			}
		}
	}
	for id := range r.records {
		if !r.seen[id] {
			delete(r.records, id)
		}
	}
	return nil
}

// byID reads groups by id. An id the answer lacks is gone; a --nodes id is
// kept as missing, asked again only at the bound.
func (r *catalogRead) byID(ids []string, static bool) error {
	if len(ids) == 0 {
		return nil
	}
	gs, err := r.m.api.ListScalingGroups(r.ctx, ids)
	if err != nil {
		return fmt.Errorf("list scaling groups by id: %w", err)
	}
	asked := map[string]bool{}
	for _, id := range ids {
		asked[id] = true
	}
	for _, g := range gs {
		// The API may answer unknown ids with other groups.
		if asked[g.ID] {
			r.put(g)
		}
	}
	for _, id := range ids {
		if r.seen[id] {
			continue
		}
		if static {
			r.records[id] = groupRecord{cloud: volcapi.ScalingGroup{ID: id}, at: r.round.At, missing: true}
		} else {
			delete(r.records, id)
		}
	}
	return nil
}

// completeByID replaces the records with a read of ids.
func (r *catalogRead) completeByID(ids []string) error {
	r.records = map[string]groupRecord{}
	return r.byID(ids, true)
}

// due reports whether a record is read again this refresh: due by the bound,
// mutated since, or listed this refresh, as a description older than the
// listing can hide an instance added and removed in between.
func (r *catalogRead) due(rec groupRecord) bool {
	id := rec.cloud.ID
	attempts := r.m.attempts(id)
	if r.round.Due(rec.at) || rec.attempts != attempts {
		return true
	}
	if rec.missing {
		return false
	}
	l, listed := r.m.listings[id]
	return !listed || l.due(attempts, r.round)
}

// rotatePages reads the next page of the list and every page due. A changed
// TotalCount reads the whole list. Due managed groups the pages missed are read
// by id, or the whole list when that costs no more calls.
func (r *catalogRead) rotatePages() (err error) {
	c := &r.m.catalog
	if c.pages == 0 {
		return r.complete()
	}
	next := c.next
	if next < 1 || next > c.pages {
		next = 1
	}
	defer func() {
		// Advance only on success, so a failed refresh skips no page.
		if err == nil {
			c.next = next%max(c.pages, 1) + 1
		}
	}()
	for n := 1; n <= c.pages; n++ {
		if n == next || r.round.Due(c.pageAt[n]) {
			if err = r.page(n); err != nil {
				return err
			}
		}
	}
	if r.totalChange || r.last > 0 && r.last < c.pages {
		return r.complete()
	}
	managed := r.m.managedIDs()
	var due []string
	for _, id := range managed {
		if rec, ok := r.records[id]; ok && !r.seen[id] && r.due(rec) {
			due = append(due, id)
		}
	}
	left := 0
	for n := 1; n <= c.pages; n++ {
		if !r.read[n] {
			left++
		}
	}
	if left == 0 || batchesOf(len(due)) >= left {
		return r.complete()
	}
	return r.byID(due, false)
}

func batchesOf(n int) int { return (n + volcapi.MaxFilterIDs - 1) / volcapi.MaxFilterIDs }

// managedIDs returns the ids of the groups in the snapshot.
func (m *manager) managedIDs() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.groups.IDs()
}

// chooseStaticMode reads page 1 for the list's length, then reads many --nodes
// ids by pages in rotation if that takes no more calls than by id, else by id.
func (r *catalogRead) chooseStaticMode(static []string) error {
	c := &r.m.catalog
	if err := r.page(1); err != nil {
		return err
	}
	pages := (r.total + volcapi.PageSize - 1) / volcapi.PageSize
	c.decided = true
	if pages <= batchesOf(len(static)) {
		return r.complete()
	}
	c.byID = true
	return r.completeByID(static)
}

// rotateByID reads --nodes ids by id: the volcapi.MaxFilterIDs least recently
// read, plus every other one that is due.
func (r *catalogRead) rotateByID(static []string) error {
	ids := slices.Clone(static)
	at := func(id string) time.Time { return r.records[id].at }
	slices.SortStableFunc(ids, func(a, b string) int { return at(a).Compare(at(b)) })
	var read []string
	for i, id := range ids {
		rec, ok := r.records[id]
		if i < volcapi.MaxFilterIDs || !ok || r.due(rec) {
			read = append(read, id)
		}
	}
	for id := range r.records {
		if !slices.Contains(static, id) {
			delete(r.records, id)
		}
	}
	return r.byID(read, true)
}

// Refresh takes a new snapshot; on error the previous one stays. Activities
// and templates are read only when something changed or failed.
func (m *manager) Refresh(ctx context.Context) error {
	return m.refreshGate.Run(ctx, m.refreshLocked)
}

// refreshLocked is Refresh; callers hold refreshGate.
func (m *manager) refreshLocked(ctx context.Context) error { return m.refreshWith(ctx, false) }

// refreshWith is a refresh; wholeList reads the whole group list, as a lookup
// of unknown instances must. Callers hold refreshGate.
func (m *manager) refreshWith(ctx context.Context, wholeList bool) error {
	// Mark the listing before the first call (the ledger's rule).
	listing := m.ledger.Begin()
	// Only CA's refreshes, not lookups, set the pace.
	round := m.fresh.Begin(!wholeList)

	all, err := m.readGroups(ctx, round, wholeList)
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	picked, resolved := selectGroups(all, m.static, m.selectors)
	if err := m.specWatch.Check(resolved); err != nil {
		return fmt.Errorf("refresh: %w", err)
	}

	instances, err := m.listInstances(ctx, picked, round)
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	failures, groupFailures := m.failures(ctx, picked, instances)
	m.refreshTemplates(ctx, picked)

	// Groups and index change together, so an instance finds its group.
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, len(picked))
	reads := make(map[string]groupRead, len(picked))
	byInstance := map[string]string{}
	for i, p := range picked {
		id := p.cloud.ID
		r := groupRead{cloud: p.cloud, instances: instances[i], failures: failures, why: p.why}
		r.min, r.max = p.bounds()
		r.unfilled, r.failure = m.unfilled(groupFailures, id, liveListed(instances[i]), p.cloud.Desired)
		ids[i], reads[id] = id, r
		for _, si := range instances[i] {
			byInstance[si.ID] = id
		}
	}
	m.groups = m.groups.Next(ids, func(id string) *nodeGroup { return newNodeGroup(m, id) },
		func(g *nodeGroup) { g.install(listing, reads[g.id]) }, m.ledger)
	for id := range m.templates {
		if !m.groups.Holds(id) {
			// A group that left contributes no GPU types.
			delete(m.templates, id)
		}
	}
	m.byInstance = byInstance
	m.fresh.End(round)
	klog.V(4).InfoS("Refreshed snapshot", "provider", ProviderName, "groups", m.groups.Len(), "instances", len(byInstance), "duration", m.now().Sub(round.At))
	return nil
}

// listInstances returns each picked group's instances: the previous listing
// where still good, otherwise a fresh one, a few groups at a time.
func (m *manager) listInstances(ctx context.Context, picked []managedGroup, round refresh.Round) ([][]volcapi.ScalingInstance, error) {
	out := make([][]volcapi.ScalingInstance, len(picked))
	errs := make([]error, len(picked))
	fresh := make([]bool, len(picked))
	attempts := make([]uint64, len(picked))
	for i, p := range picked {
		attempts[i] = m.ledger.Attempts(p.cloud.ID)
	}
	sem := make(chan struct{}, refreshParallelism)
	var wg sync.WaitGroup
	for i, p := range picked {
		if l, ok := m.listings[p.cloud.ID]; ok && l.stillGood(p.cloud, attempts[i], round) {
			out[i] = l.instances
			continue
		}
		fresh[i] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = m.api.ListScalingInstances(ctx, p.cloud.ID)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("list instances of scaling group %s: %w", picked[i].cloud.ID, err)
		}
	}
	listings := make(map[string]groupListing, len(picked))
	for i, p := range picked {
		l := m.listings[p.cloud.ID]
		if fresh[i] {
			l = groupListing{desired: p.cloud.Desired, total: p.cloud.TotalInstances, lifecycle: p.cloud.LifecycleState,
				attempts: attempts[i], at: round.At, instances: out[i]}
		}
		listings[p.cloud.ID] = l
	}
	m.listings = listings
	return out, nil
}

// groupFailure is why a group is short of its desired number.
type groupFailure struct {
	// msg is the failed activity's message; unknown: activities were unreadable.
	msg     string
	unknown bool
}

// unfilled returns how many slots of group id the service failed to fill, and
// why: the whole shortfall if the latest activity failed, else none. Unreadable
// activities keep the slots (-1), capped at the shortfall.
func (m *manager) unfilled(failures map[string]groupFailure, id string, live, desired int) (int, *cloudprovider.InstanceErrorInfo) {
	f, short := failures[id]
	if !short {
		return 0, nil
	}
	n := max(desired-live, 0)
	if f.unknown {
		slots := m.ledger.Group(id, slotIDs(id), false).FailedSlots()
		if len(slots) <= n {
			return -1, nil
		}
		return n, slots[0].Info
	}
	info := creationError(f.msg)
	return n, &info
}

// failures reads scaling activities only for groups with Error instances or
// fewer live instances than desired. It returns the message per failed
// instance, and per short group whose latest activity failed or is unreadable.
func (m *manager) failures(ctx context.Context, picked []managedGroup, instances [][]volcapi.ScalingInstance) (byInstance map[string]string, byGroup map[string]groupFailure) {
	byInstance, byGroup = map[string]string{}, map[string]groupFailure{}
	for i, p := range picked {
		failed, live := false, 0
		for _, si := range instances[i] {
			failed = failed || si.Status == asStatusError
			if isLive(si.Status) {
				live++
			}
		}
		short := p.cloud.Desired != volcapi.NoDesiredNumber && live < p.cloud.Desired
		if !failed && !short {
			continue
		}
		// Every activity: failed instances were made by older ones.
		acts, err := m.api.ActivitiesSince(ctx, p.cloud.ID, time.Time{})
		if err != nil {
			klog.V(2).InfoS("Could not read scaling activities", "provider", ProviderName, "nodeGroup", p.cloud.ID, "err", err)
			if short {
				byGroup[p.cloud.ID] = groupFailure{unknown: true}
			}
			continue
		}
		for _, a := range acts {
			if !a.Failed {
				continue
			}
			for _, r := range a.Related {
				if _, seen := byInstance[r.InstanceID]; !seen && r.InstanceFailed() {
					byInstance[r.InstanceID] = firstNonEmpty(r.Message, a.ResultMsg)
				}
			}
		}
		if !short {
			continue
		}
		// Only an activity since our latest change tells whether the missing
		// slots are worked on; the list order is undocumented, so times decide.
		var since time.Time
		if g, managed := m.group(p.cloud.ID); managed {
			since = g.ChangedAt().Truncate(time.Second)
		}
		for _, a := range acts {
			if a.CreatedAt.Before(since) {
				continue
			}
			if a.Failed {
				byGroup[p.cloud.ID] = groupFailure{msg: firstNonEmpty(a.ResultMsg, "the latest scaling activity failed")}
			}
			break
		}
	}
	return byInstance, byGroup
}

// tagSelector is one --node-group-auto-discovery value: a group matches when it
// carries every listed tag (any value when none is given). Selectors are ORed.
type tagSelector struct {
	raw  string
	tags []tagMatch
}

type tagMatch struct {
	key      string
	value    string
	anyValue bool
}

func (s tagSelector) matches(tags map[string]string) bool {
	for _, m := range s.tags {
		v, ok := tags[m.key]
		if !ok || (!m.anyValue && v != m.value) {
			return false
		}
	}
	return true
}

// parseDiscoverySpecs parses the selectors and reports every bad one.
func parseDiscoverySpecs(values []string) ([]tagSelector, error) {
	var out []tagSelector
	var errs []error
	for _, raw := range values {
		sel, err := parseDiscoverySpec(raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sel)
	}
	return out, errors.Join(errs...)
}

func parseDiscoverySpec(raw string) (tagSelector, error) {
	bad := func(why string) (tagSelector, error) {
		return tagSelector{}, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument,
			"--node-group-auto-discovery %q: %s (want asg:tag=<key>[=<value>][,<key>[=<value>]...])", raw, why)
	}
	if !strings.HasPrefix(raw, discoveryPrefix) {
		return bad("unknown discoverer, only asg: is supported")
	}
	body := strings.TrimPrefix(raw, discoveryPrefix)
	if !strings.HasPrefix(body, discoveryTag) {
		return bad("missing tag=")
	}
	body = strings.TrimPrefix(body, discoveryTag)
	sel := tagSelector{raw: raw}
	seen := map[string]bool{}
	for _, part := range strings.Split(body, ",") {
		part = strings.TrimSpace(part)
		part = strings.TrimPrefix(part, discoveryTag)
		if part == "" {
			return bad("empty tag")
		}
		key, value, hasValue := strings.Cut(part, "=")
		key = strings.TrimSpace(key)
		if key == "" {
			return bad("empty tag key")
		}
		if seen[key] {
			return bad(fmt.Sprintf("tag key %q given twice", key))
		}
		seen[key] = true
		sel.tags = append(sel.tags, tagMatch{key: key, value: strings.TrimSpace(value), anyValue: !hasValue})
	}
	return sel, nil
}

// selectGroups picks the managed groups: those --nodes names, then those a
// selector matches. The resolution says which specs matched nothing.
func selectGroups(all []volcapi.ScalingGroup, static []groupconfig.NodeGroupSpec, selectors []tagSelector) ([]managedGroup, groupconfig.SpecResolution) {
	candidates := make([]groupconfig.SpecCandidate, 0, len(all))
	for _, g := range all {
		candidates = append(candidates, groupconfig.SpecCandidate{ID: g.ID})
	}
	resolved := groupconfig.ResolveSpecs(static, candidates)
	var picked []managedGroup
	taken := map[string]bool{}
	for _, g := range all {
		if spec, ok := resolved.ByGroup[g.ID]; ok && !taken[g.ID] {
			taken[g.ID] = true
			picked = append(picked, managedGroup{cloud: g, spec: &spec, why: cloudprovider.Management{By: cloudprovider.ManagedByNodes, Detail: spec.String()}})
		}
	}
	for _, g := range all {
		if taken[g.ID] {
			continue
		}
		for _, sel := range selectors {
			if sel.matches(g.Tags) {
				taken[g.ID] = true
				picked = append(picked, managedGroup{cloud: g, why: cloudprovider.Management{By: cloudprovider.ManagedByDiscovery, Detail: sel.raw}})
				break
			}
		}
	}
	return picked, resolved
}

// managedGroup is a scaling group CA manages, with why it was chosen.
type managedGroup struct {
	cloud volcapi.ScalingGroup
	spec  *groupconfig.NodeGroupSpec
	why   cloudprovider.Management
}

// bounds returns the group's own min and max, the spec's where it has none.
func (m managedGroup) bounds() (minSize, maxSize int) {
	minSize, maxSize = m.cloud.Min, m.cloud.Max
	if !m.cloud.HasMin && m.spec != nil {
		minSize = m.spec.MinSize
	}
	if !m.cloud.HasMax && m.spec != nil {
		maxSize = m.spec.MaxSize
	}
	return minSize, maxSize
}

// groupListing is a group's last instance listing and its description then.
type groupListing struct {
	desired, total int
	lifecycle      string
	// attempts is Ledger.Attempts when the listing started.
	attempts  uint64
	at        time.Time
	instances []volcapi.ScalingInstance
}

// stillGood reports whether a refresh may reuse the listing: the description
// shows the same desired number, total and lifecycle state, and it is not due.
func (l groupListing) stillGood(g volcapi.ScalingGroup, attempts uint64, round refresh.Round) bool {
	return l.desired == g.Desired && l.total == g.TotalInstances && l.lifecycle == g.LifecycleState &&
		!l.due(attempts, round)
}

// due reports whether the listing is taken again whatever the description
// says: a mutation attempt since, the bound reached (Round.Expired), or an
// instance not InService.
func (l groupListing) due(attempts uint64, round refresh.Round) bool {
	if l.attempts != attempts || round.Expired(l.at) {
		return true
	}
	for _, in := range l.instances {
		if in.Status != asStatusInService {
			return true
		}
	}
	return false
}
