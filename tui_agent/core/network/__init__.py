"""What a network grant reaches, and the host's doors out under it: policy.py (the checks, web_fetch's GET), proxy.py."""
