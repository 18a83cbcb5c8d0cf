"""Components in Python: a small API for writing an SCA component over
omniORBpy, mirroring the C++ runtime's (cpp/runtime/), and the programs
written with it.

- component: the Component base class (the whole CF::Resource) and its context;
- properties: declared properties, configure and query over CORBA anys;
- ports: provides and uses data ports; policy: the connection policy they take;
- program: the SCA execute protocol (parameters, naming registration, life);
- stage: the Python stage, `scabench-py-stage`;
- idl: the omniORBpy stubs of idl/, generated on first use.

This layer stands on its own: it imports nothing of scabench but the base
(errors, paths), so a component program loads no more than it needs.
"""
