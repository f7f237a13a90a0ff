"""Content keys encrypted for a recipient, as DASH-IF CPIX 2.3 §5.3.4-5.3.6 and Axinom's CPIX library write them
(pycryptodome: the independent side of the origin's `CPIXDelivery`): a random 256-bit document key and a 512-bit MAC
key, each RSA-OAEP (SHA-1, MGF1-SHA-1) sealed for the recipient's public key in a `DeliveryData`; each content key's
`EncryptedValue` is IV || AES-256-CBC(PKCS#7(key)) under the document key, its `ValueMAC` HMAC-SHA512(MAC key, that
value)."""
import base64
import hashlib
import hmac
import os

from Crypto.Cipher import AES, PKCS1_OAEP
from Crypto.Util.Padding import pad

NAMESPACES = 'xmlns:enc="http://www.w3.org/2001/04/xmlenc#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#"'
RSA_OAEP = '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"/>'


def b64(data):
    return base64.b64encode(data).decode()


class Sealer:
    def __init__(self, public_key, certificate_der=b"\x30\x00"):
        self.public_key, self.certificate_der = public_key, certificate_der
        self.document_key, self.mac_key = os.urandom(32), os.urandom(64)

    def delivery_data_list(self):
        oaep = PKCS1_OAEP.new(self.public_key)
        return f"""<cpix:DeliveryDataList><cpix:DeliveryData>
    <cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>{b64(self.certificate_der)}</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey>
    <cpix:DocumentKey Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"><cpix:Data><pskc:Secret><pskc:EncryptedValue>
      {RSA_OAEP}<enc:CipherData><enc:CipherValue>{b64(oaep.encrypt(self.document_key))}</enc:CipherValue></enc:CipherData>
    </pskc:EncryptedValue></pskc:Secret></cpix:Data></cpix:DocumentKey>
    <cpix:MACMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"><cpix:Key>
      {RSA_OAEP}<enc:CipherData><enc:CipherValue>{b64(oaep.encrypt(self.mac_key))}</enc:CipherValue></enc:CipherData>
    </cpix:Key></cpix:MACMethod>
  </cpix:DeliveryData></cpix:DeliveryDataList>"""

    def secret(self, key, mac_of=None):
        """The `pskc:Secret` content of `key` (EncryptedValue and ValueMAC); the MAC of `mac_of(value)` to forge one."""
        iv = os.urandom(16)
        sealed = iv + AES.new(self.document_key, AES.MODE_CBC, iv).encrypt(pad(key, 16))
        mac = hmac.new(self.mac_key, mac_of(sealed) if mac_of else sealed, hashlib.sha512).digest()
        return (f'<pskc:EncryptedValue><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"/>'
                f'<enc:CipherData><enc:CipherValue>{b64(sealed)}</enc:CipherValue></enc:CipherData></pskc:EncryptedValue>'
                f'<pskc:ValueMAC>{b64(mac)}</pskc:ValueMAC>')
