"""The node agent, `scabench node`: one per machine of a domain, an SCA
DeviceManager with one ExecutableDevice that starts component programs there
for a launcher (docs/architecture.md, "Nodes").

- settings: the command line's values, checked;
- agent: the ORB, the registration in the domain's Naming Service (and
  with a DomainManager), the heartbeat, the node's end;
- device: the CORBA servants (NodeDevice, DeviceManager), the device's
  properties (REDHAWK's GPP's among them);
- profile: the DCD, SPDs, PRF and SCD the node writes of itself;
- filesystem: its DeviceManager's read-only fileSys, which serves them;
- loaded: what load copies from a caller's file system (--accept-loaded),
  the node's cache of it;
- processes: the programs it started, their end and their CPU.

A launcher's side of a node (its names, node_alive) is run/nodes.py."""
