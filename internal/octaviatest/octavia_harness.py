#!/usr/bin/python3
"""A real OpenStack Octavia (Debian's python3-octavia 11.0.0) in one process.

The Octavia v2 API's pecan application (octavia.api.app.setup_app, what
octavia-api serves) on a threaded wsgiref server on a loopback port, with
noauth, a SQLite file database recreated at each start (its lookup tables
seeded as Octavia's functional tests do), the fake:// message transport and
an in-process controller worker (the oslo.messaging server octavia-worker
runs, threading executor, taskflow's serial engine, no jobboard). The
amphora provider runs on Octavia's no-op amphora, compute, network, image
and volume drivers, so load balancers and their children really go through
the controller's flows: PENDING_CREATE -> ACTIVE, PENDING_UPDATE while a
child changes, PENDING_DELETE -> gone. A throwaway CA, made at each start,
is what the amphora create flow signs its certificates with.

Octavia trusts X-Project-Id under noauth and refuses a create without a
project. In a real cloud keystonemiddleware sets X-Project-Id from the
token; the harness does the same for a Nova noauth2 token (X-Auth-Token
USER:PROJECT) when X-Project-Id is absent, so one admin_token cloud serves
both the local Nova and this Octavia.

When ready it prints KEY=VALUE lines on stdout (and into STATE_DIR/env),
GROVE_OCTAVIA_READY=1 last. Every file it makes is under --state-dir. It
exits on SIGTERM or SIGINT, and with --die-with-parent when the process that
started it is gone (checked twice a second), removing the state directory
first when asked to. Run it with Debian's /usr/bin/python3: that is where
the packages are.
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import socket
import socketserver
import sys
import threading
import types
import warnings

PACKAGES = ("python3-octavia python3-oslotest python3-wsgi-intercept "
            "python3-requests-mock python3-ddt")

PROJECT_ID = "admin"
TOKEN = "admin:admin"
# The no-op network driver accepts any subnet id and gives every VIP this
# address; the subnet id is fixed so that every start offers the same one.
SUBNET_ID = "8d0b1d5e-6f57-4c1b-9a3e-0c7a5e1f0b01"
VIP_ADDRESS = "198.51.100.1"

CONF_TEMPLATE = """\
[DEFAULT]
transport_url = fake://
host = grove-octavia
debug = {debug}
use_stderr = false
log_file = {state}/octavia.log

[api_settings]
auth_strategy = noauth
bind_host = 127.0.0.1
default_provider_driver = amphora
enabled_provider_drivers = amphora:The amphora provider on no-op drivers,octavia:Alias of amphora

[database]
connection = sqlite:///{state}/octavia.db

[controller_worker]
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
network_driver = network_noop_driver
image_driver = image_noop_driver
volume_driver = volume_noop_driver
loadbalancer_topology = SINGLE
amp_image_tag = amphora
amp_flavor_id = noop-flavor
amp_boot_network_list = 00000000-0000-0000-0000-00000000000a
amp_active_retries = 3
amp_active_wait_sec = 0
client_ca = {state}/ca/ca.pem

[certificates]
cert_generator = local_cert_generator
ca_certificate = {state}/ca/ca.pem
ca_private_key = {state}/ca/ca.key

[haproxy_amphora]
api_db_commit_retry_initial_delay = 0
api_db_commit_retry_backoff = 1
api_db_commit_retry_max = 1
connection_max_retries = 1
connection_retry_interval = 0
build_active_retries = 3
build_retry_interval = 0

[task_flow]
engine = serial
max_workers = 5
jobboard_enabled = false

[nova]
enable_anti_affinity = false
"""


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--state-dir", required=True,
                   help="directory for every file the harness writes")
    p.add_argument("--listen", default="127.0.0.1:0",
                   help="HOST:PORT to serve on (port 0 picks a free one)")
    p.add_argument("--nova-clouds-yaml", default="",
                   help="the local Nova's clouds.yaml: its grove-nova cloud "
                        "is copied as grove-openstack with this Octavia added")
    p.add_argument("--debug", action="store_true",
                   help="log at DEBUG level into octavia.log")
    p.add_argument("--die-with-parent", action="store_true",
                   help="exit when the parent process is gone")
    p.add_argument("--remove-state-on-exit", action="store_true",
                   help="remove --state-dir when exiting")
    return p.parse_args(argv)


def fail(msg, code=1):
    sys.__stderr__.write("octavia_harness: %s\n" % msg)
    sys.__stderr__.flush()
    os._exit(code)


def make_ca(ca_dir):
    """A throwaway CA: without one the amphora create flow fails and the
    load balancer goes ERROR, no-op drivers or not."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    os.makedirs(ca_dir, exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                         "grove-octavia-test-ca")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None),
                           critical=True)
            .sign(key, hashes.SHA256()))
    with open(os.path.join(ca_dir, "ca.key"), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.TraditionalOpenSSL,
                                  serialization.NoEncryption()))
    with open(os.path.join(ca_dir, "ca.pem"), "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))


def project_from_token(app):
    """What keystonemiddleware does in a real cloud, for noauth2 tokens:
    X-Project-Id from X-Auth-Token USER:PROJECT when the client sent none."""
    def wrapped(environ, start_response):
        token = environ.get("HTTP_X_AUTH_TOKEN", "")
        if not environ.get("HTTP_X_PROJECT_ID") and ":" in token:
            environ["HTTP_X_PROJECT_ID"] = token.split(":", 1)[1]
        return app(environ, start_response)
    return wrapped


def write_clouds_yaml(path, base, nova_clouds_yaml):
    # JSON is YAML; no YAML library is needed to write it.
    clouds = {"grove-octavia": {
        "auth_type": "admin_token",
        "auth": {"endpoint": base, "token": TOKEN},
        "load_balancer_endpoint_override": base,
    }}
    if nova_clouds_yaml:
        # The Nova harness writes JSON, so json reads it.
        with open(nova_clouds_yaml) as f:
            text = "".join(l for l in f if not l.lstrip().startswith("#"))
        nova = json.loads(text)["clouds"]["grove-nova"]
        nova["load_balancer_endpoint_override"] = base
        clouds["grove-openstack"] = nova
    with open(path + ".tmp", "w") as f:
        f.write("# The local Octavia harness "
                "(internal/octaviatest/octavia_harness.py).\n")
        json.dump({"clouds": clouds}, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def main(argv):
    args = parse_args(argv)
    state = os.path.abspath(args.state_dir)
    os.makedirs(state, exist_ok=True)
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        fail("--listen must be HOST:PORT, got %r" % args.listen, 2)
    if args.nova_clouds_yaml and not os.path.isfile(args.nova_clouds_yaml):
        fail("no Nova clouds.yaml at %s" % args.nova_clouds_yaml, 2)
    ppid = os.getppid()

    def exit_now():
        if args.remove_state_on_exit:
            shutil.rmtree(state, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, lambda signum, frame: exit_now())
    signal.signal(signal.SIGINT, lambda signum, frame: exit_now())

    # Listen first, to fail fast on a taken port; no SO_REUSEPORT, so a
    # second harness cannot silently share it.
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, int(port)))
        sock.listen(64)
    except OSError as e:
        fail("cannot listen on %s: %s" % (args.listen, e))

    # SQLAlchemy warns at each seeded row about Octavia's overlapping tag
    # relationships; that says nothing about the harness.
    warnings.filterwarnings("ignore", message="relationship .* will copy column")
    try:
        from unittest import mock
        from wsgiref import simple_server

        from oslo_config import cfg
        from oslo_messaging.rpc import dispatcher

        from octavia.api import app as api_app
        from octavia.common import constants
        from octavia.common import rpc
        from octavia.db import api as db_api
        from octavia.db import base_models
        from octavia.tests.functional.db import base as db_test_base
    except ImportError as e:
        fail("cannot import Octavia (%s); install the Debian packages: "
             "apt-get install -y --no-install-recommends %s" % (e, PACKAGES), 3)

    # Every start is a fresh cloud.
    for name in ("octavia.db", "octavia.db-journal", "env", "clouds.yaml"):
        try:
            os.remove(os.path.join(state, name))
        except FileNotFoundError:
            pass
    make_ca(os.path.join(state, "ca"))
    conf_file = os.path.join(state, "octavia.conf")
    with open(conf_file, "w") as f:
        f.write(CONF_TEMPLATE.format(state=state, debug=str(args.debug).lower()))

    try:
        # As Octavia's BaseAPITest: no Barbican, and no dump of every option.
        mock.patch("octavia.certificates.manager.barbican."
                   "BarbicanCertManager").start()
        cfg.CONF.log_opt_values = mock.MagicMock()
        # Reads the config, sets up logging and the fake:// transport, loads
        # the provider drivers.
        app = api_app.setup_app(argv=["octavia-api", "--config-file",
                                      conf_file])

        # A file, not memory: the API's and the worker's threads share it.
        engine = db_api.get_engine()
        base_models.BASE.metadata.create_all(engine)
        seeder = types.SimpleNamespace(
            _seed_lookup_table=lambda s, n, m:
                db_test_base.OctaviaDBTestBase._seed_lookup_table(
                    None, s, n, m))
        db_test_base.OctaviaDBTestBase._seed_lookup_tables(
            seeder, db_api.get_session())

        # The controller worker, as octavia-worker's ConsumerService runs it.
        from octavia.controller.queue.v2 import endpoints
        import oslo_messaging as messaging
        target = messaging.Target(topic=constants.TOPIC_AMPHORA_V2,
                                  server=cfg.CONF.host, fanout=False)
        rpc_server = rpc.get_server(
            target, [endpoints.Endpoints()], executor="threading",
            access_policy=dispatcher.DefaultRPCAccessPolicy)
        rpc_server.start()
    except Exception as e:  # noqa: BLE001  (report whatever failed)
        import traceback
        sys.__stderr__.write(traceback.format_exc())
        fail("Octavia did not start: %s" % e)

    access = open(os.path.join(state, "access.log"), "a", buffering=1)

    class Handler(simple_server.WSGIRequestHandler):
        def log_message(self, fmt, *a):
            access.write("%s - - [%s] %s\n" % (
                self.address_string(), self.log_date_time_string(), fmt % a))

        def get_stderr(self):
            return access

    class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
        daemon_threads = True

    httpd = Server((host, int(port)), Handler, bind_and_activate=False)
    httpd.socket.close()
    httpd.socket = sock
    httpd.server_bind = lambda: None
    # WSGIServer.server_bind sets what the environ needs; do it by hand
    # since the socket is already bound.
    httpd.server_name = host
    httpd.server_port = sock.getsockname()[1]
    httpd.setup_environ()
    httpd.set_app(project_from_token(app))

    base = "http://%s:%d/" % (host, httpd.server_port)
    clouds = os.path.join(state, "clouds.yaml")
    try:
        write_clouds_yaml(clouds, base, args.nova_clouds_yaml)
    except (OSError, ValueError, KeyError) as e:
        fail("cannot read the Nova clouds.yaml %s: %s"
             % (args.nova_clouds_yaml, e), 2)
    env = [
        ("GROVE_OCTAVIA_ENDPOINT", base),
        ("GROVE_OCTAVIA_PROJECT_ID", PROJECT_ID),
        ("GROVE_OCTAVIA_TOKEN", TOKEN),
        ("GROVE_OCTAVIA_SUBNET_ID", SUBNET_ID),
        ("GROVE_OCTAVIA_VIP_ADDRESS", VIP_ADDRESS),
        ("GROVE_OCTAVIA_CLOUDS_YAML", clouds),
        ("GROVE_OCTAVIA_PID", str(os.getpid())),
    ]
    text = "".join("%s=%s\n" % kv for kv in env)
    with open(os.path.join(state, "env.tmp"), "w") as f:
        f.write(text)
    os.replace(os.path.join(state, "env.tmp"), os.path.join(state, "env"))

    def housekeeping():
        while True:
            threading.Event().wait(0.5)
            if args.die_with_parent and os.getppid() != ppid:
                exit_now()

    threading.Thread(target=housekeeping, daemon=True).start()
    sys.__stdout__.write(text + "GROVE_OCTAVIA_READY=1\n")
    sys.__stdout__.flush()
    httpd.serve_forever(poll_interval=0.5)


if __name__ == "__main__":
    main(sys.argv[1:])
