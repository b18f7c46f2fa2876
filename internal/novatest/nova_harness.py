#!/usr/bin/python3
"""A real OpenStack Nova (Debian's python3-nova, Zed) in one process.

Nova's own functional-test base (_IntegratedTestBase) stands the service up:
SQLite databases in memory, the fake:// message transport with casts made
calls, Placement in process, the Glance/Neutron/Cinder test fixtures and the
real scheduler and conductor. This script starts several fake-driver compute
hosts on it and serves the real osapi_compute WSGI application (noauth2) on a
loopback TCP port with eventlet, beside a small read-only Glance v2 image API
(under /image/) over the Glance fixture's images, since Nova's own image proxy
stops at microversion 2.35 and gophercloud v2 has no client for it.

When ready it prints KEY=VALUE lines on stdout (and into STATE_DIR/env),
GROVE_NOVA_READY=1 last. Every file it makes is under --state-dir. It exits on
SIGTERM or SIGINT, and with --die-with-parent when the process that started it
is gone (checked twice a second), removing the state directory first when
asked to. Run it with Debian's /usr/bin/python3: that is where the packages are.
"""

import argparse
import copy
import datetime
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import urllib.parse

PACKAGES = ("python3-nova python3-placement python3-oslotest "
            "python3-wsgi-intercept python3-requests-mock python3-ddt")

# Images the harness adds to the Glance fixture, with names unique among the
# fixture's (its own are mostly all called fakeimage123456), so that tests
# and examples can name them. Fixed ids: every start offers the same ones.
IMAGES = (
    ("c1e5ab2e-0b5d-4a61-9d5b-6f7e2b1d0a01", "grove-image"),
    ("c1e5ab2e-0b5d-4a61-9d5b-6f7e2b1d0a02", "grove-image-2"),
)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--state-dir", required=True,
                   help="directory for every file the harness writes")
    p.add_argument("--listen", default="127.0.0.1:0",
                   help="HOST:PORT to serve on (port 0 picks a free one)")
    p.add_argument("--hosts", default="host-a,host-b,host-drs-1",
                   help="comma-separated fake compute host names")
    p.add_argument("--paste", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "api-paste.ini"),
        help="the paste config holding osapi_compute")
    p.add_argument("--neutron-endpoint", default="",
                   help="a real Neutron's endpoint (neutron_harness.py) "
                        "to use instead of Nova's Neutron fixture")
    p.add_argument("--die-with-parent", action="store_true",
                   help="exit when the parent process is gone")
    p.add_argument("--remove-state-on-exit", action="store_true",
                   help="remove --state-dir when exiting")
    return p.parse_args(argv)


def fail(msg, code=1):
    # The test base captures sys.stdout and sys.stderr: write to the
    # process's real stderr.
    sys.__stderr__.write("nova_harness: %s\n" % msg)
    sys.__stderr__.flush()
    os._exit(code)


def main(argv):
    args = parse_args(argv)
    state = os.path.abspath(args.state_dir)
    tmp = os.path.join(state, "tmp")
    os.makedirs(tmp, exist_ok=True)
    # The test base's lock directory and any other temporary file go under
    # the state directory.
    os.environ["TMPDIR"] = tmp
    tempfile.tempdir = None
    # stevedore caches entry points under XDG_CACHE_HOME (~/.cache).
    os.environ["XDG_CACHE_HOME"] = os.path.join(state, "cache")
    hosts = [h.strip() for h in args.hosts.split(",") if h.strip()]
    if len(set(hosts)) != len(hosts) or not hosts:
        fail("--hosts must name distinct hosts, got %r" % args.hosts, 2)
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        fail("--listen must be HOST:PORT, got %r" % args.listen, 2)
    if not os.path.isfile(args.paste):
        fail("no paste config at %s" % args.paste, 2)
    ppid = os.getppid()

    def exit_now():
        if args.remove_state_on_exit:
            shutil.rmtree(state, ignore_errors=True)
        os._exit(0)

    def stop(signum, frame):
        exit_now()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    try:
        import nova.monkey_patch  # noqa: F401  (eventlet first)
        import eventlet
        import eventlet.wsgi
        from nova.tests.functional import integrated_helpers
    except ImportError as e:
        fail("cannot import Nova's test tree (%s); install the Debian "
             "packages: apt-get install -y --no-install-recommends %s"
             % (e, PACKAGES), 3)

    class Harness(integrated_helpers._IntegratedTestBase):
        ADMIN_API = True
        # noauth2 needs no Keystone stubs.
        STUB_KEYSTONE = False

        def runTest(self):
            pass

        def _setup_services(self):
            self.flags(compute_driver="fake.MediumFakeDriver")
            self.flags(auth_strategy="noauth2", group="api")
            self.flags(api_paste_config=args.paste, group="wsgi")
            # Clusters and benchmarks boot more servers than the default
            # quotas (10 instances, 10 members a group) allow.
            self.flags(instances=-1, cores=-1, ram=-1, server_groups=-1,
                       server_group_members=-1, key_pairs=-1,
                       metadata_items=-1, group="quota")
            # Nova maps a requested zone to placement aggregates only when
            # an aggregate names it, so a server asked for the default zone
            # ("nova") may land on a host an aggregate moved to another
            # zone. Nova's documentation has deployments that keep the
            # default zone enable AvailabilityZoneFilter; so does Grove's.
            self.flags(enabled_filters=[
                "AvailabilityZoneFilter", "ComputeFilter",
                "ComputeCapabilitiesFilter", "ImagePropertiesFilter",
                "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter",
            ], group="filter_scheduler")
            for image_id, name in IMAGES:
                image = copy.deepcopy(self.glance.image1)
                image.update(id=image_id, name=name)
                self.glance.create(None, image)
            super()._setup_services()

        def _setup_compute_service(self):
            first = None
            for h in hosts:
                svc = self._start_compute(h)
                first = first or svc
            return first

    # Listen first, to fail fast on a taken port. reuse_port=False: eventlet
    # sets SO_REUSEPORT by default, and a second harness would then silently
    # share the port.
    try:
        sock = eventlet.listen((host, int(port)), reuse_port=False)
    except OSError as e:
        fail("cannot listen on %s: %s" % (args.listen, e))

    harness = Harness()
    try:
        harness.setUp()
    except Exception as e:  # noqa: BLE001  (report whatever setUp raised)
        import traceback
        sys.__stderr__.write(traceback.format_exc())
        fail("Nova did not start: %s" % e)

    if args.neutron_endpoint:
        use_neutron(args.neutron_endpoint)
    else:
        spread_fixture_addresses(harness.neutron)

    # The test base keeps INFO logs in memory; send them to a file instead
    # so a long-running harness does not grow and its log can be read.
    root = logging.getLogger()
    for h in list(root.handlers):
        if isinstance(h, logging.StreamHandler):
            root.removeHandler(h)
    fh = logging.FileHandler(os.path.join(state, "nova.log"))
    fh.setLevel(logging.INFO)
    fh.setFormatter(logging.Formatter(
        "%(asctime)s %(levelname)s [%(name)s] %(message)s"))
    root.addHandler(fh)

    nova_app = harness.api_fixture.app()
    glance = harness.glance

    bound = sock.getsockname()[1]
    base = "http://%s:%d" % (host, bound)

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/image" or path.startswith("/image/"):
            return image_api(glance, base, environ, start_response)
        return nova_app(environ, start_response)

    env = [
        ("OS_AUTH_TYPE", "admin_token"),
        ("OS_TOKEN", "admin:admin"),
        ("OS_ENDPOINT", base + "/v2.1/"),
        ("OS_PROJECT_ID", "admin"),
        ("GROVE_NOVA_CLOUDS_YAML", os.path.join(state, "clouds.yaml")),
        ("GROVE_NOVA_IMAGE_ENDPOINT", base + "/image/"),
        ("GROVE_NOVA_IMAGE_ID", IMAGES[0][0]),
        ("GROVE_NOVA_IMAGE_NAME", IMAGES[0][1]),
        ("GROVE_NOVA_IMAGE2_ID", IMAGES[1][0]),
        ("GROVE_NOVA_IMAGE2_NAME", IMAGES[1][1]),
        ("GROVE_NOVA_FLAVORS", "m1.tiny,m1.small,m1.medium,m1.large,m1.xlarge"),
        ("GROVE_NOVA_HOSTS", ",".join(hosts)),
        ("GROVE_NOVA_PID", str(os.getpid())),
    ]
    if args.neutron_endpoint:
        env.append(("GROVE_NOVA_NETWORK_ENDPOINT", args.neutron_endpoint))
    write_clouds_yaml(os.path.join(state, "clouds.yaml"), base,
                      args.neutron_endpoint)
    text = "".join("%s=%s\n" % kv for kv in env)
    with open(os.path.join(state, "env.tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(state, "env.tmp"), os.path.join(state, "env"))

    def housekeeping():
        while True:
            eventlet.sleep(0.5)
            if args.die_with_parent and os.getppid() != ppid:
                exit_now()
            # Nothing waits on the notifications the test base collects.
            harness.notifier.reset()

    eventlet.spawn_n(housekeeping)
    sys.__stdout__.write(text + "GROVE_NOVA_READY=1\n")
    sys.__stdout__.flush()
    access = open(os.path.join(state, "access.log"), "a", buffering=1)
    eventlet.wsgi.server(sock, app, log=access, keepalive=True,
                         max_size=4096)


def image_api(glance, base, environ, start_response):
    """A read-only subset of Glance's v2 API over the Glance fixture."""
    path = environ["PATH_INFO"][len("/image"):].rstrip("/")
    method = environ["REQUEST_METHOD"]

    def reply(status, body):
        data = json.dumps(body).encode()
        start_response(status, [("Content-Type", "application/json"),
                                ("Content-Length", str(len(data)))])
        return [data]

    if method != "GET":
        return reply("405 Method Not Allowed",
                     {"message": "this image API is read-only"})
    if path == "":
        return reply("300 Multiple Choices", {"versions": [{
            "id": "v2.9", "status": "CURRENT",
            "links": [{"rel": "self", "href": base + "/image/v2/"}]}]})
    if path == "/v2/images":
        q = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
        images = [image_view(base, i) for i in glance.detail(None)]
        for key in ("name", "status", "visibility", "id"):
            if key in q:
                images = [i for i in images if i.get(key) in q[key]]
        images.sort(key=lambda i: i["id"])
        return reply("200 OK", {"images": images, "first": "/v2/images",
                                "schema": "/v2/schemas/images"})
    if path.startswith("/v2/images/") and path.count("/") == 3:
        image_id = path.rsplit("/", 1)[1]
        for i in glance.detail(None):
            if str(i["id"]) == image_id:
                return reply("200 OK", image_view(base, i))
        return reply("404 Not Found", {
            "message": "No image found with ID %s" % image_id})
    return reply("404 Not Found", {"message": "not found: %s" % path})


def image_view(base, image):
    def when(t):
        if isinstance(t, datetime.datetime):
            return t.strftime("%Y-%m-%dT%H:%M:%SZ")
        return t

    view = {
        "id": str(image["id"]),
        "name": image.get("name"),
        "status": image.get("status", "active"),
        "visibility": image.get("visibility", "public"),
        "container_format": image.get("container_format"),
        "disk_format": image.get("disk_format"),
        "size": int(image["size"]) if image.get("size") else None,
        "min_ram": image.get("min_ram", 0),
        "min_disk": image.get("min_disk", 0),
        "protected": image.get("protected", False),
        "tags": image.get("tags", []),
        "owner": image.get("owner"),
        "created_at": when(image.get("created_at")),
        "updated_at": when(image.get("updated_at")),
        "self": "/v2/images/%s" % image["id"],
        "file": "/v2/images/%s/file" % image["id"],
        "schema": "/v2/schemas/image",
    }
    for k, v in (image.get("properties") or {}).items():
        view.setdefault(k, v)
    return view


def spread_fixture_addresses(neutron):
    """The Neutron fixture gives every port the same address (its default
    port's 192.168.1.30); a load balancer's members must differ by
    address, so each new port gets its own on the private subnet."""
    fixture_create_port = neutron.create_port
    next_host = [0]

    def create_port(body=None):
        out = fixture_create_port(body)
        port = out["port"]
        host = 2 + next_host[0] % 250
        next_host[0] += 1
        ips = [{"ip_address": "192.168.1.%d" % host,
                "subnet_id": neutron.subnet_1["id"]}]
        port["fixed_ips"] = ips
        neutron._ports[port["id"]]["fixed_ips"] = copy.deepcopy(ips)
        return out

    neutron.create_port = create_port


def use_neutron(endpoint):
    """Points Nova's Neutron client at a real Neutron instead of the
    fixture the test base installed. The Neutron harness reads the token as
    USER:PROJECT, as Nova's noauth2 does, so each call acts as the user and
    project of Nova's request context (admin:admin when it has none)."""
    from neutronclient.v2_0 import client as clientv20
    import nova.network.neutron as nova_neutron

    def get_client(context, admin=False):
        user = getattr(context, "user_id", None) or "admin"
        project = getattr(context, "project_id", None) or "admin"
        if admin or (context.is_admin and not context.auth_token):
            user = "admin"
        c = clientv20.Client(endpoint_url=endpoint.rstrip("/"),
                             token="%s:%s" % (user, project))
        return nova_neutron.ClientWrapper(c, admin=admin or context.is_admin)

    nova_neutron.get_client = get_client


def write_clouds_yaml(path, base, network=""):
    # JSON is YAML; no YAML library is needed to write it.
    doc = {"clouds": {"grove-nova": {
        "auth_type": "admin_token",
        "auth": {"endpoint": base + "/v2.1/", "token": "admin:admin"},
        "compute_endpoint_override": base + "/v2.1/",
        "image_endpoint_override": base + "/image/",
    }}}
    if network:
        doc["clouds"]["grove-nova"]["network_endpoint_override"] = network
    with open(path, "w") as f:
        f.write("# The local Nova harness (internal/novatest/nova_harness.py).\n")
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
