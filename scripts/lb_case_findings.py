"""The findings of docs/case-study-load-balancing.md in words, each checked against the runs."""

import statistics

import lb_case_runs as lb
from lb_case_sections import claim, number, us

LIMIT = 1.1  # the criterion: p99 FCT within 10 % of the no-collision bound


class View:
    """Short names for what the findings read."""

    def __init__(self, runs, bound):
        self.runs, self.bound = runs, bound

    def a2a(self, name):
        return self.runs["a2a/" + name]

    def ratio(self, name, bound=None):
        return self.a2a(name).fct["all_to_all"]["p99_ns"] / (bound or self.bound).ns

    def fct(self, name, key="p99_ns"):
        return self.a2a(name).fct["all_to_all"][key]

    def sent_again(self, name, prefix="a2a/"):
        return self.runs[prefix + name].total("retransmitted_packets")

    def missing(self, mode, k):
        name = f"{mode}-ooo" if k == 64 else f"{mode}-ooo-loss-{k}"
        return self.a2a(name).total("missing_packets")

    def depth(self, mode):
        """How deep the mode reorders, from the loss_after probe: the largest k that still saw
        reports, and the next k that saw none."""
        seen = [k for k in lb.LOSS_AFTER if self.missing(mode, k) > 0]
        if not seen:
            return "none seen"
        above = [k for k in lb.LOSS_AFTER if k > max(seen) and self.missing(mode, k) == 0]
        return f"{max(seen)} to {above[0] - 1} PSNs" if above else f"{max(seen)} PSNs or more"


def ecmp(v, single):
    run, ooo, adaptive = v.a2a("ecmp-gbn"), v.a2a("ecmp-ooo"), v.a2a("adaptive-ooo")
    claim(v.ratio("ecmp-gbn") > LIMIT and v.ratio("ecmp-dcqcn-off") > LIMIT,
          "ECMP's p99 is more than 10 % above the bound, with DCQCN and without")
    claim(run.fct == ooo.fct and v.sent_again("ecmp-gbn") == v.sent_again("ecmp-ooo") == 0,
          "ECMP runs alike with either receiver and sends nothing again")
    claim(run.uplink_spread > 1.2 and run.deepest["leaf up"] > 10 * adaptive.deepest["leaf up"],
          "ECMP loads the leaf uplinks unevenly and queues there")
    return (
        f"1. **ECMP collides.** One path per QP: p99 FCT {us(v.fct('ecmp-gbn'))} us, "
        f"{v.ratio('ecmp-gbn'):.2f} times the bound, maximum {us(v.fct('ecmp-gbn', 'max_ns'))} us. "
        f"The hash left the busiest leaf uplink with {run.uplink_spread:.2f} times the mean "
        f"uplink's bytes, and queues of up to {run.deepest['leaf up'] / 1e3:,.0f} KB at leaf "
        f"uplinks and {run.deepest['spine down'] / 1e3:,.0f} KB at spine downlinks, where adaptive "
        f"routing keeps them to {adaptive.deepest['leaf up'] / 1e3:,.0f} and "
        f"{adaptive.deepest['spine down'] / 1e3:,.0f} KB. Without DCQCN the collisions alone give "
        f"{v.ratio('ecmp-dcqcn-off'):.2f} times the bound: DCQCN's cuts, on the marks of the "
        f"collided queues, make the rest. Both receivers give the same run to the digit: on one "
        f"path nothing arrives out of order.")


def criterion(v, single):
    seeds = [v.ratio(f"adaptive-ooo-seed-{s}") for s in lb.SEEDS]
    ratio = v.ratio("adaptive-ooo")
    claim(ratio <= LIMIT and max(seeds) <= LIMIT and v.sent_again("adaptive-ooo") == 0,
          "adaptive routing with out-of-order receivers is within 10 % of the bound")
    off = v.ratio("single-switch-dcqcn-off", single)
    claim(off < ratio and v.ratio("adaptive-ooo-dcqcn-off") < ratio,
          "the fabric without DCQCN, and one switch, come closer to their bounds")
    host = v.a2a("single-switch-dcqcn-off").deepest["to host"]
    return (
        f"2. **The criterion holds.** Adaptive routing with out-of-order receivers: p99 "
        f"{us(v.fct('adaptive-ooo'))} us, {ratio:.3f} times the bound of {us(v.bound.ns)} us "
        f"({100 * (ratio - 1):.1f} % above it; seeds 1-3: {min(seeds):.3f} to {max(seeds):.3f}), "
        f"and no packet sent again. Little of what is left is the paths: without DCQCN it is "
        f"{v.ratio('adaptive-ooo-dcqcn-off'):.3f}, and one 64-port switch, which has no path to "
        f"choose, ends at {off:.3f} times its own bound with queues of up to {host / 1e3:,.0f} KB "
        f"toward the hosts: the all-to-all's own incast at the receivers' ports, which no choice "
        f"of uplink removes.")


def rewinds(v, single):
    run = v.a2a("adaptive-gbn")
    seeds = [f"adaptive-gbn-seed-{s}" for s in lb.SEEDS]
    claim(run.naks > 0 and v.sent_again("adaptive-gbn") > 0 and run.total("timeouts") > 0
          and v.ratio("adaptive-gbn") > LIMIT and run.total("drops") == 0,
          "go-back-N receivers under adaptive routing rewind and time out without drops")
    ratios = [v.ratio(name) for name in seeds]
    short = v.a2a("adaptive-gbn-timeout-100us")
    claim(short.fct["all_to_all"]["max_ns"] < run.fct["all_to_all"]["max_ns"] / 10
          and short.total("timeouts") > 10 * run.total("timeouts"),
          "a short first timeout trades the long stalls for many timeouts")
    return (
        f"3. **Go-back-N shows the rewinds.** The same run with go-back-N receivers: "
        f"{number(run.naks)} NAKs, {number(v.sent_again('adaptive-gbn'))} packets sent again "
        f"and {run.total('timeouts')} timeouts, with no packet dropped; p99 "
        f"{us(v.fct('adaptive-gbn'))} us ({v.ratio('adaptive-gbn'):.1f} times the bound), "
        f"maximum {v.fct('adaptive-gbn', 'max_ns') / 1e6:.1f} ms. Every packet that overtakes an "
        f"earlier one costs a NAK and a rewind of everything after the gap, and the packets sent "
        f"again fill the queues that adaptive routing compares, which reorders more: over seeds "
        f"1-3, {', '.join(number(v.sent_again(n)) for n in seeds)} packets sent again and p99 "
        f"{min(ratios):.2f} to {max(ratios):.2f} times the bound. The maximum is a stall on the "
        f"retransmission timer (below); with a first timeout of 100 us it falls to "
        f"{short.fct['all_to_all']['max_ns'] / 1e6:.2f} ms, but {number(short.total('timeouts'))} "
        f"timeouts fire and p99 is {us(short.fct['all_to_all']['p99_ns'])} us.")


def modes(v, single):
    claim(v.ratio("flowlet-ooo") <= LIMIT and v.sent_again("flowlet-gbn") < 100,
          "flowlets reorder little")
    claim(v.ratio("spray-ooo") <= min(v.ratio("adaptive-ooo"), v.ratio("flowlet-ooo"))
          and v.sent_again("spray-gbn") > 0 and v.ratio("spray-gbn") > v.ratio("spray-ooo"),
          "switch spray is the fastest with out-of-order receivers and rewinds with go-back-N")
    sender, entropy = v.a2a("sender-spray-ooo"), v.a2a("switch-entropy-ooo")
    claim(sender.fct == entropy.fct and sender.summary["ports"] == entropy.summary["ports"],
          "sender spray on ECMP switches and entropy spraying switches are the same run")
    worst = max((v.ratio(f"{m}-gbn"), m) for m, _, _ in lb.MODES)
    claim(worst[1] == "sender-spray" and v.ratio("sender-spray-ooo") > v.ratio("adaptive-ooo"),
          "sender spray is the worst with go-back-N and behind adaptive with out-of-order")
    return (
        f"4. **Flowlets** (a flow moves after a 50 us pause) move a flow only when its pause is "
        f"longer than the paths differ, so they reorder little: "
        f"{number(v.sent_again('flowlet-gbn'))} packets sent again with go-back-N and p99 "
        f"{v.ratio('flowlet-gbn'):.3f} and {v.ratio('flowlet-ooo'):.3f} times the bound. "
        f"**Switch spray** at random: {v.ratio('spray-ooo'):.3f} with out-of-order receivers, "
        f"the lowest of all; {number(v.sent_again('spray-gbn'))} packets sent again and "
        f"{v.ratio('spray-gbn'):.3f} with go-back-N. **Sender spray** (a new UDP source port "
        f"on every packet, 256 in turn, hashed by ECMP switches): "
        f"{v.ratio('sender-spray-ooo'):.3f} with out-of-order receivers, since a QP's ports "
        f"hash onto the uplinks as unevenly as QPs do (busiest uplink "
        f"{sender.uplink_spread:.2f} times the mean); with go-back-N "
        f"{number(v.sent_again('sender-spray-gbn'))} packets sent again, "
        f"{v.a2a('sender-spray-gbn').total('timeouts')} timeouts and "
        f"{v.ratio('sender-spray-gbn'):.1f} times the bound, the worst run. Switches that spray "
        f"by the hash of the source port (`spray: entropy`) give the same run to the digit.")


def costs(v, single):
    mix = {m: v.runs[f"mix/{m}-ooo"].total("missing_packets") for m in lb.PROBED}
    claim(all(v.missing(m, 64) == 0 for m in lb.PROBED) and mix["adaptive"] > 0,
          "loss_after 64 covers the all-to-all's reordering but not the mix's")
    hosts = [v.a2a(f"{m}-ooo").deepest["to host"] for m, _, _ in lb.MODES]
    claim(all(v.runs[n].total("drops") == 0 for n in v.runs), "no run drops a packet")
    claim(all(v.a2a(f"{m}-ooo").deepest["to host"] >= v.a2a(f"{m}-ooo").deepest["leaf up"]
              for m, _, _ in lb.MODES), "the deepest queues are toward the hosts")
    gbn = v.a2a("adaptive-gbn")
    return (
        f"5. **Reordering depth**, the deepest seen (the loss_after probe, below): flowlets "
        f"{v.depth('flowlet')}, adaptive {v.depth('adaptive')}, switch spray "
        f"{v.depth('spray')}, sender spray {v.depth('sender-spray')}; so the default "
        f"loss_after of 64 costs the all-to-all nothing. The mix reorders deeper: at loss_after 64 "
        f"its out-of-order receivers reported {number(mix['adaptive'])} PSNs missing under "
        f"adaptive routing, {number(mix['spray'])} under switch spray and "
        f"{number(mix['sender-spray'])} under sender spray, none of them lost, each sent again. "
        f"**Buffer:** with out-of-order receivers the deepest queues of every mode are toward "
        f"the hosts ({min(hosts) / 1e3:,.0f} to {max(hosts) / 1e3:,.0f} KB), where the "
        f"all-to-all's incast meets; load balancing moves the fabric links' queues (the costs "
        f"table). Going back N deepens every queue: adaptive routing with go-back-N reached "
        f"{gbn.deepest['to host'] / 1e3:,.0f} KB toward a host and "
        f"{number(gbn.total('pfc_pauses_received'))} PFC pauses, against "
        f"{v.a2a('adaptive-ooo').deepest['to host'] / 1e3:,.0f} KB and none.")


def mix(v, single):
    mean = {(m, r): statistics.mean(v.runs[f"mix/{m}-{r}"].busbw()) for m, _, _ in lb.MODES
            for r, _, _ in lb.RECEIVERS}
    p99 = {(m, r): v.runs[f"mix/{m}-{r}"].fct["all_to_all"]["p99_ns"] for m, _, _ in lb.MODES
           for r, _, _ in lb.RECEIVERS}
    ooo = [key for key in mean if key[1] == "ooo"]
    ecmp_run, spray_run = v.runs["mix/ecmp-gbn"], v.runs["mix/spray-ooo"]
    claim(all(abs(p99[k] / p99[("ecmp", "gbn")] - 1) < 0.05 for k in ooo),
          "in the mix, no mode moves the all-to-all's p99 by 5 % with out-of-order receivers")
    base = v.runs["mix/ecmp-gbn"].busbw()
    swing = statistics.pstdev(base)
    claim(all(abs(mean[k] - statistics.mean(base)) < swing for k in ooo),
          "in the mix, no mode moves the all-reduce's mean busbw by more than ECMP's deviation")
    claim(spray_run.uplink_spread < 1.05 < 1.5 < ecmp_run.uplink_spread,
          "in the mix, spraying evens the uplinks that ECMP loads unevenly")
    hosts = [v.runs[f"mix/{m}-{r}"].deepest["to host"] for m, r in mean]
    timed_out = v.runs["mix/sender-spray-gbn"]
    split = ["adaptive", "spray", "sender-spray"]
    claim(all(v.sent_again(f"{m}-gbn", "mix/") > 0 for m in split)
          and v.sent_again("flowlet-gbn", "mix/") == 0,
          "in the mix, go-back-N rewinds under the modes that split a QP, not under flowlets")
    claim(timed_out.total("timeouts") > 0 and mean[("sender-spray", "gbn")] == max(mean.values()),
          "sender spray with go-back-N stalls the mix's all-to-all, leaving the all-reduce alone")
    return (
        f"6. **The mix gains little.** Its congestion is at the hosts' ports, where the "
        f"all-to-all's incast meets the ring (its deepest queues are toward the hosts, "
        f"{min(hosts) / 1e3:,.0f} to {max(hosts) / 1e3:,.0f} KB), not on the fabric's links. Switch spray evens the uplinks' bytes "
        f"({spray_run.uplink_spread:.2f} times the mean at the busiest, against ECMP's "
        f"{ecmp_run.uplink_spread:.2f}), but with out-of-order receivers the all-to-all's p99 "
        f"stays within 5 % of ECMP's {us(p99[('ecmp', 'gbn')])} us under every mode, and the "
        f"all-reduce's mean busbw moves between {min(mean[k] for k in ooo):.2f} and "
        f"{max(mean[k] for k in ooo):.2f} GB/s (ECMP {mean[('ecmp', 'gbn')]:.2f}), less than "
        f"ECMP's busbw deviates from one iteration to the next ({swing:.2f} GB/s). With go-back-N "
        f"adaptive routing and both sprays rewind (flowlets, which wait for a pause, do not); "
        f"sender spray sent "
        f"{number(timed_out.total('retransmitted_packets'))} packets again and waited on a "
        f"timeout that ended the all-to-all at "
        f"{timed_out.end_ms('all_to_all'):.1f} ms instead of about 20; the all-reduce, alone "
        f"on the fabric meanwhile, ran its last iterations at up to {max(timed_out.busbw()):.1f} "
        f"GB/s, which is why that row's mean is the highest.")


def findings(runs, config, bound, single):
    v = View(runs, bound)
    leaf = config["fabric"]["leaf_spine"]
    # The bound assumes the fabric's links are no slower than the hosts': 1:1, links at port speed.
    claim(leaf["ports_per_leaf"] <= leaf["spines"] * leaf.get("links", 1)
          and "uplink_speed" not in leaf and leaf.get("oversubscription", 1) == 1,
          "the leaf-spine is 1:1 with links at the port speed")
    parts = [ecmp, criterion, rewinds, modes, costs, mix]
    return [p for part in parts for p in (part(v, single), "")][:-1]
