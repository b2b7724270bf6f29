"""RED and CoDel (tna/aqm/aqm.p4) on a switch."""
