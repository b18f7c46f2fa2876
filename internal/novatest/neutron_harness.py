#!/usr/bin/python3
"""A real OpenStack Neutron (Debian's python3-neutron 21, Zed) in one process.

The real neutron-server API (the pecan v2 application with the extensions
middleware), the ML2 core plugin and the L3 router service plugin, on a
SQLite file database, served with eventlet on a loopback port. There are no
agents: ML2 binds ports with a mechanism driver defined here that binds every
port on every host (vif_type ovs), which is what Nova needs to boot a server
on a port. There is no Keystone: like Nova's noauth2, X-Auth-Token is read as
USER:PROJECT and the user "admin" is an admin.

At start it creates the networks tests and examples name (KEY=VALUE lines
below): a private network and subnet, an external network with its subnet,
a router between them (so floating IPs can be associated), and a security
group. When ready it prints KEY=VALUE lines on stdout (and into
STATE_DIR/neutron.env), GROVE_NEUTRON_READY=1 last. Every file it makes is
under --state-dir. It exits on SIGTERM or SIGINT, and with --die-with-parent
when the process that started it is gone. Run it with Debian's
/usr/bin/python3.
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile

PACKAGES = "python3-neutron"

# The mechanism driver's entry point name, registered through a
# dist-info directory under the state directory (ML2 loads mechanism
# drivers with stevedore, which only knows entry points).
MECH = "grove_bind_all"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--state-dir", required=True)
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--die-with-parent", action="store_true")
    p.add_argument("--remove-state-on-exit", action="store_true")
    return p.parse_args(argv)


def fail(msg, code=1):
    sys.__stderr__.write("neutron_harness: %s\n" % msg)
    sys.__stderr__.flush()
    os._exit(code)


def mechanism_driver():
    """The ML2 mechanism driver class: binds any port, on any host."""
    from neutron_lib.api.definitions import portbindings
    from neutron_lib import constants
    from neutron_lib.plugins.ml2 import api

    class BindAll(api.MechanismDriver):
        def initialize(self):
            pass

        def bind_port(self, context):
            for seg in context.segments_to_bind:
                context.set_binding(
                    seg[api.ID], portbindings.VIF_TYPE_OVS,
                    {portbindings.CAP_PORT_FILTER: True,
                     portbindings.OVS_HYBRID_PLUG: False},
                    status=constants.PORT_STATUS_ACTIVE)
                return

    return BindAll


# stevedore instantiates the entry point's object: a module attribute that
# builds the class when called keeps the neutron imports out of module load.
def BindAllDriver():  # noqa: N802  (called as a class by stevedore)
    return mechanism_driver()()


CONF_TEMPLATE = """
[DEFAULT]
core_plugin = ml2
service_plugins = router
auth_strategy = noauth
state_path = {state}
transport_url = fake:/
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dhcp_agent_notification = false
allow_overlapping_ips = true
api_workers = 0
rpc_workers = 0
rpc_state_report_workers = 0
debug = false
log_file = {state}/neutron.log
use_stderr = false

[database]
connection = sqlite:///{state}/neutron.sqlite

[oslo_concurrency]
lock_path = {state}/lock

[ml2]
type_drivers = flat,local
tenant_network_types = local
mechanism_drivers = {mech}
extension_drivers = port_security

[ml2_type_flat]
flat_networks = *

[securitygroup]
enable_security_group = true

[quotas]
default_quota = -1
quota_network = -1
quota_subnet = -1
quota_port = -1
quota_router = -1
quota_floatingip = -1
quota_security_group = -1
quota_security_group_rule = -1
"""


def register_driver(state):
    """Makes the mechanism driver an entry point stevedore can find."""
    here = os.path.dirname(os.path.abspath(__file__))
    lib = os.path.join(state, "pylib")
    info = os.path.join(lib, "grove_neutron_harness-0.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: grove-neutron-harness\nVersion: 0\n")
    with open(os.path.join(info, "entry_points.txt"), "w") as f:
        f.write("[neutron.ml2.mechanism_drivers]\n%s = neutron_harness:BindAllDriver\n" % MECH)
    for d in (lib, here):
        if d not in sys.path:
            sys.path.insert(0, d)


class NoAuth:
    """Nova's noauth2 for Neutron: X-Auth-Token USER:PROJECT becomes the
    identity headers Neutron's keystone context middleware reads."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        token = environ.get("HTTP_X_AUTH_TOKEN", "admin:admin")
        user, _, project = token.partition(":")
        project = project or user
        for k in ("HTTP_X_ROLES", "HTTP_X_USER_ID", "HTTP_X_PROJECT_ID",
                  "HTTP_X_TENANT_ID", "HTTP_X_USER_NAME",
                  "HTTP_X_PROJECT_NAME"):
            environ.pop(k, None)
        environ["HTTP_X_USER_ID"] = user
        environ["HTTP_X_USER_NAME"] = user
        environ["HTTP_X_PROJECT_ID"] = project
        environ["HTTP_X_TENANT_ID"] = project
        environ["HTTP_X_PROJECT_NAME"] = project
        environ["HTTP_X_IDENTITY_STATUS"] = "Confirmed"
        roles = ["member", "reader"]
        if user == "admin":
            roles.insert(0, "admin")
        environ["HTTP_X_ROLES"] = ",".join(roles)
        return self.app(environ, start_response)


def main(argv):
    args = parse_args(argv)
    state = os.path.abspath(args.state_dir)
    tmp = os.path.join(state, "tmp")
    os.makedirs(tmp, exist_ok=True)
    os.makedirs(os.path.join(state, "lock"), exist_ok=True)
    os.environ["TMPDIR"] = tmp
    tempfile.tempdir = None
    os.environ["XDG_CACHE_HOME"] = os.path.join(state, "cache")
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        fail("--listen must be HOST:PORT, got %r" % args.listen, 2)
    ppid = os.getppid()

    def exit_now():
        if args.remove_state_on_exit:
            shutil.rmtree(state, ignore_errors=True)
        os._exit(0)

    def install_handlers():
        signal.signal(signal.SIGTERM, lambda s, f: exit_now())
        signal.signal(signal.SIGINT, lambda s, f: exit_now())

    install_handlers()
    try:
        import eventlet
        eventlet.monkey_patch()
        import eventlet.wsgi
        from neutron.common import config as common_config
    except ImportError as e:
        fail("cannot import Neutron (%s); install the Debian package: "
             "apt-get install -y --no-install-recommends %s" % (e, PACKAGES), 3)

    register_driver(state)
    conf = os.path.join(state, "neutron.conf")
    with open(conf, "w") as f:
        f.write(CONF_TEMPLATE.format(state=state, mech=MECH))
    db = os.path.join(state, "neutron.sqlite")
    if os.path.exists(db):
        os.remove(db)

    try:
        sock = eventlet.listen((host, int(port)), reuse_port=False)
    except OSError as e:
        fail("cannot listen on %s: %s" % (args.listen, e))

    try:
        app = build(conf)
        base = "http://%s:%d/" % (host, sock.getsockname()[1])
        env = seed(base)
    except Exception as e:  # noqa: BLE001  (report whatever setup raised)
        import traceback
        sys.__stderr__.write(traceback.format_exc())
        fail("Neutron did not start: %s" % e)

    env = [("GROVE_NEUTRON_ENDPOINT", base),
           ("GROVE_NEUTRON_PID", str(os.getpid()))] + env
    text = "".join("%s=%s\n" % kv for kv in env)
    with open(os.path.join(state, "neutron.env.tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(state, "neutron.env.tmp"),
               os.path.join(state, "neutron.env"))

    def housekeeping():
        while True:
            eventlet.sleep(0.5)
            if args.die_with_parent and os.getppid() != ppid:
                exit_now()

    eventlet.spawn_n(housekeeping)
    # Something in Neutron's start-up replaces the SIGTERM handler (without
    # this the process ignored SIGTERM): put ours back.
    install_handlers()
    sys.__stdout__.write(text + "GROVE_NEUTRON_READY=1\n")
    sys.__stdout__.flush()
    access = open(os.path.join(state, "neutron-access.log"), "a", buffering=1)
    eventlet.wsgi.server(sock, app, log=access, keepalive=True, max_size=4096)


def build(conf):
    """Neutron's v2 WSGI application, as neutron-server's paste pipeline
    builds it, behind NoAuth, with the schema made on a new database."""
    from neutron.common import config as common_config
    common_config.register_common_config_options()
    common_config.init(["--config-file", conf])
    common_config.setup_logging()

    from oslo_db.sqlalchemy import enginefacade  # noqa: F401
    from neutron_lib.db import api as db_api
    from neutron.db.migration.models import head
    engine = db_api.CONTEXT_WRITER.get_engine()
    head.get_metadata().create_all(engine)

    from neutron.api import extensions
    from neutron.auth import NeutronKeystoneContext
    from neutron.pecan_wsgi import app as pecan_app
    from oslo_middleware import request_id

    v2 = pecan_app.v2_factory(None)
    v2 = extensions.plugin_aware_extension_middleware_factory(None)(v2)
    v2 = NeutronKeystoneContext(v2)
    v2 = NoAuth(v2)
    v2 = request_id.RequestId(v2)

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/v2.0" or path.startswith("/v2.0/"):
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/v2.0"
            environ["PATH_INFO"] = path[len("/v2.0"):] or "/"
            return v2(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]

    return app


def seed(base):
    """The networks, subnets, router and security group tests name."""
    from neutron_lib import context
    from neutron_lib.plugins import directory

    ctx = context.Context(user_id="admin", project_id="admin", is_admin=True)
    core = directory.get_plugin()
    l3 = directory.get_plugin("L3_ROUTER_NAT")

    def net(name, external, net_type):
        body = {"name": name, "admin_state_up": True, "tenant_id": "admin",
                "router:external": external, "shared": external,
                "provider:network_type": net_type}
        if net_type == "flat":
            body["provider:physical_network"] = name
        return core.create_network(ctx, {"network": body})

    def subnet(network, name, cidr):
        return core.create_subnet(ctx, {"subnet": {
            "name": name, "network_id": network["id"], "tenant_id": "admin",
            "ip_version": 4, "cidr": cidr, "enable_dhcp": False,
            "gateway_ip": cidr.rsplit(".", 1)[0] + ".1",
            "allocation_pools": [{"start": cidr.rsplit(".", 1)[0] + ".10",
                                  "end": cidr.rsplit(".", 1)[0] + ".250"}],
            "dns_nameservers": [], "host_routes": [],
            "subnetpool_id": None, "description": ""}})

    private = net("grove-private", False, "local")
    private_sub = subnet(private, "grove-private-subnet", "10.20.0.0/24")
    private_sub2 = subnet(private, "grove-private-subnet-2", "10.21.0.0/24")
    public = net("grove-public", True, "flat")
    public_sub = subnet(public, "grove-public-subnet", "172.24.4.0/24")
    router = l3.create_router(ctx, {"router": {
        "name": "grove-router", "tenant_id": "admin", "admin_state_up": True,
        "external_gateway_info": {"network_id": public["id"]}}})
    for s in (private_sub, private_sub2):
        l3.add_router_interface(ctx, router["id"], {"subnet_id": s["id"]})
    sg = core.create_security_group(ctx, {"security_group": {
        "name": "grove-web", "tenant_id": "admin",
        "description": "Grove's test security group"}})
    return [
        ("GROVE_NEUTRON_NETWORK", private["name"]),
        ("GROVE_NEUTRON_NETWORK_ID", private["id"]),
        ("GROVE_NEUTRON_SUBNET", private_sub["name"]),
        ("GROVE_NEUTRON_SUBNET_ID", private_sub["id"]),
        ("GROVE_NEUTRON_SUBNET2", private_sub2["name"]),
        ("GROVE_NEUTRON_EXTERNAL_NETWORK", public["name"]),
        ("GROVE_NEUTRON_EXTERNAL_NETWORK_ID", public["id"]),
        ("GROVE_NEUTRON_SECURITY_GROUP", sg["name"]),
        ("GROVE_NEUTRON_SECURITY_GROUP_ID", sg["id"]),
    ]


if __name__ == "__main__":
    main(sys.argv[1:])
