import pytest

from templatemine.html.charset import UndecodableError, decode_html


def test_header_wins_and_latin1_means_windows_1252():
    payload = "<p>\u201cquoted\u201d caf\u00e9</p>".encode("cp1252")
    text, codec, source = decode_html(payload, "text/html; charset=ISO-8859-1")
    assert text == "<p>\u201cquoted\u201d caf\u00e9</p>"
    assert (codec, source) == ("cp1252", "header")


def test_meta_when_no_header_charset():
    html = "<html><head><meta charset='windows-1251'></head><body>\u041f\u0440\u0438\u0432\u0435\u0442</body></html>"
    text, codec, source = decode_html(html.encode("cp1251"), "text/html")
    assert "\u041f\u0440\u0438\u0432\u0435\u0442" in text and source == "meta"
    html2 = '<meta http-equiv="Content-Type" content="text/html; charset=gb2312"><p>\u4e2d\u6587</p>'
    text2, codec2, source2 = decode_html(html2.encode("gb18030"), None)
    assert "\u4e2d\u6587" in text2 and codec2 == "gb18030" and source2 == "meta"


def test_wrong_header_falls_through_to_what_fits():
    payload = "<p>\u00fcber \u2013 na\u00efve</p>".encode("utf-8")
    # a page labelled Shift_JIS that is really UTF-8 decodes with many errors as cp932
    text, codec, source = decode_html(payload * 50, "text/html; charset=shift_jis")
    assert "\u00fcber" in text


def test_bom_and_plain_utf8_and_detection():
    assert decode_html(b"\xef\xbb\xbf<p>x</p>", "text/html; charset=latin1")[2] == "bom"
    assert decode_html("<p>\u00e9t\u00e9</p>".encode(), None)[1:] == ("utf-8", "utf-8")
    french = ("Le c\u0153ur de l'\u00e9l\u00e8ve \u00e9tait \u00e0 la fen\u00eatre ; d\u00e9j\u00e0, \u00e7a va. "
              "Les gar\u00e7ons ont mang\u00e9 des cr\u00eapes apr\u00e8s l'\u00e9cole, o\u00f9 il fait tr\u00e8s froid. ")
    text, _, source = decode_html(("<p>" + french * 5 + "</p>").encode("cp1252"), None)
    assert source == "detected" and french in text


def test_binary_is_undecodable():
    with pytest.raises(UndecodableError):
        decode_html(bytes(range(0, 32)) * 200, "text/html")
