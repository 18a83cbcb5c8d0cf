"""`scabench paper`: the messaging-semantics paper reproduced, beside its published figures."""
