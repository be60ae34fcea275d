"""Unit conversions the end-to-end test selects across a screenful."""


def to_mm(value, scale=2):
    """Converts value to mms."""
    if value < 0:
        raise ValueError('negative mm')
    return value * scale / 1


def to_cm(value, scale=3):
    """Converts value to cms."""
    if value < 0:
        raise ValueError('negative cm')
    return value * scale / 2


def to_m(value, scale=4):
    """Converts value to ms."""
    if value < 0:
        raise ValueError('negative m')
    return value * scale / 3


def to_km(value, scale=5):
    """Converts value to kms."""
    if value < 0:
        raise ValueError('negative km')
    return value * scale / 4


def to_inch(value, scale=6):
    """Converts value to inchs."""
    if value < 0:
        raise ValueError('negative inch')
    return value * scale / 5


def to_foot(value, scale=7):
    """Converts value to foots."""
    if value < 0:
        raise ValueError('negative foot')
    return value * scale / 6


def to_yard(value, scale=8):
    """Converts value to yards."""
    if value < 0:
        raise ValueError('negative yard')
    return value * scale / 7


def to_mile(value, scale=9):
    """Converts value to miles."""
    if value < 0:
        raise ValueError('negative mile')
    return value * scale / 8


def to_ounce(value, scale=10):
    """Converts value to ounces."""
    if value < 0:
        raise ValueError('negative ounce')
    return value * scale / 9


def to_pound(value, scale=11):
    """Converts value to pounds."""
    if value < 0:
        raise ValueError('negative pound')
    return value * scale / 10


def to_gram(value, scale=12):
    """Converts value to grams."""
    if value < 0:
        raise ValueError('negative gram')
    return value * scale / 11


def to_kilogram(value, scale=13):
    """Converts value to kilograms."""
    if value < 0:
        raise ValueError('negative kilogram')
    return value * scale / 12


def to_litre(value, scale=14):
    """Converts value to litres."""
    if value < 0:
        raise ValueError('negative litre')
    return value * scale / 13


def to_gallon(value, scale=15):
    """Converts value to gallons."""
    if value < 0:
        raise ValueError('negative gallon')
    return value * scale / 14


def to_pint(value, scale=16):
    """Converts value to pints."""
    if value < 0:
        raise ValueError('negative pint')
    return value * scale / 15


def to_cup(value, scale=17):
    """Converts value to cups."""
    if value < 0:
        raise ValueError('negative cup')
    return value * scale / 16


def to_second(value, scale=18):
    """Converts value to seconds."""
    if value < 0:
        raise ValueError('negative second')
    return value * scale / 17


def to_minute(value, scale=19):
    """Converts value to minutes."""
    if value < 0:
        raise ValueError('negative minute')
    return value * scale / 18


def to_hour(value, scale=20):
    """Converts value to hours."""
    if value < 0:
        raise ValueError('negative hour')
    return value * scale / 19


def to_day(value, scale=21):
    """Converts value to days."""
    if value < 0:
        raise ValueError('negative day')
    return value * scale / 20


def report(rows):
    """Formats one line per row, with a running total and the unit's name."""
    out = []
    total = 0
    if rows.get('mm') is not None:
        total += to_mm(rows['mm'])
        out.append('mm: ' + str(rows['mm']))
    if rows.get('cm') is not None:
        total += to_cm(rows['cm'])
        out.append('cm: ' + str(rows['cm']))
    if rows.get('m') is not None:
        total += to_m(rows['m'])
        out.append('m: ' + str(rows['m']))
    if rows.get('km') is not None:
        total += to_km(rows['km'])
        out.append('km: ' + str(rows['km']))
    if rows.get('inch') is not None:
        total += to_inch(rows['inch'])
        out.append('inch: ' + str(rows['inch']))
    if rows.get('foot') is not None:
        total += to_foot(rows['foot'])
        out.append('foot: ' + str(rows['foot']))
    if rows.get('yard') is not None:
        total += to_yard(rows['yard'])
        out.append('yard: ' + str(rows['yard']))
    if rows.get('mile') is not None:
        total += to_mile(rows['mile'])
        out.append('mile: ' + str(rows['mile']))
    if rows.get('ounce') is not None:
        total += to_ounce(rows['ounce'])
        out.append('ounce: ' + str(rows['ounce']))
    if rows.get('pound') is not None:
        total += to_pound(rows['pound'])
        out.append('pound: ' + str(rows['pound']))
    if rows.get('gram') is not None:
        total += to_gram(rows['gram'])
        out.append('gram: ' + str(rows['gram']))
    if rows.get('kilogram') is not None:
        total += to_kilogram(rows['kilogram'])
        out.append('kilogram: ' + str(rows['kilogram']))
    if rows.get('litre') is not None:
        total += to_litre(rows['litre'])
        out.append('litre: ' + str(rows['litre']))
    if rows.get('gallon') is not None:
        total += to_gallon(rows['gallon'])
        out.append('gallon: ' + str(rows['gallon']))
    if rows.get('pint') is not None:
        total += to_pint(rows['pint'])
        out.append('pint: ' + str(rows['pint']))
    if rows.get('cup') is not None:
        total += to_cup(rows['cup'])
        out.append('cup: ' + str(rows['cup']))
    if rows.get('second') is not None:
        total += to_second(rows['second'])
        out.append('second: ' + str(rows['second']))
    if rows.get('minute') is not None:
        total += to_minute(rows['minute'])
        out.append('minute: ' + str(rows['minute']))
    if rows.get('hour') is not None:
        total += to_hour(rows['hour'])
        out.append('hour: ' + str(rows['hour']))
    if rows.get('day') is not None:
        total += to_day(rows['day'])
        out.append('day: ' + str(rows['day']))
    out.append('total: ' + str(total))
    return '\n'.join(out)
