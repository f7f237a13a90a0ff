"""A self-signed certificate for 127.0.0.1 (the TLS port's tests)."""
import subprocess


def self_signed(directory):
    """(cert.pem, key.pem) in `directory`, made with openssl: RSA 2048, CN and subjectAltName 127.0.0.1, one day."""
    cert, key = str(directory / "cert.pem"), str(directory / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    return cert, key
