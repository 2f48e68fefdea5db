package geo

// zones is the IANA time zone of each city of the table (data/cities.tsv),
// by its name there: the users' hours of an SLA window (sla.windows, the
// evening default of issue 30) are read in it. A test holds it to the
// table, city for city.
var zones = map[string]string{
	"Hong Kong": "Asia/Hong_Kong", "Shanghai": "Asia/Shanghai", "Beijing": "Asia/Shanghai",
	"Guangzhou": "Asia/Shanghai", "Shenzhen": "Asia/Shanghai", "Chengdu": "Asia/Shanghai",
	"Chongqing": "Asia/Shanghai", "Hangzhou": "Asia/Shanghai", "Nanjing": "Asia/Shanghai",
	"Wuhan": "Asia/Shanghai", "Xi'an": "Asia/Shanghai", "Tianjin": "Asia/Shanghai",
	"Qingdao": "Asia/Shanghai", "Xiamen": "Asia/Shanghai", "Fuzhou": "Asia/Shanghai",
	"Kunming": "Asia/Shanghai", "Shenyang": "Asia/Shanghai", "Zhengzhou": "Asia/Shanghai",
	"Changsha": "Asia/Shanghai", "Jinan": "Asia/Shanghai", "Harbin": "Asia/Shanghai",
	"Hefei": "Asia/Shanghai", "Nanning": "Asia/Shanghai", "Macau": "Asia/Macau",
	"Taipei": "Asia/Taipei", "Tokyo": "Asia/Tokyo", "Osaka": "Asia/Tokyo", "Seoul": "Asia/Seoul",
	"Singapore": "Asia/Singapore", "Kuala Lumpur": "Asia/Kuala_Lumpur", "Bangkok": "Asia/Bangkok",
	"Ho Chi Minh City": "Asia/Ho_Chi_Minh", "Hanoi": "Asia/Bangkok", "Manila": "Asia/Manila",
	"Jakarta": "Asia/Jakarta", "Mumbai": "Asia/Kolkata", "Chennai": "Asia/Kolkata",
	"Dubai": "Asia/Dubai", "Sydney": "Australia/Sydney", "Melbourne": "Australia/Melbourne",
	"Auckland": "Pacific/Auckland", "Los Angeles": "America/Los_Angeles",
	"San Jose": "America/Los_Angeles", "Santa Clara": "America/Los_Angeles",
	"Fremont": "America/Los_Angeles", "San Francisco": "America/Los_Angeles",
	"Seattle": "America/Los_Angeles", "Las Vegas": "America/Los_Angeles", "Phoenix": "America/Phoenix",
	"Denver": "America/Denver", "Dallas": "America/Chicago", "Chicago": "America/Chicago",
	"Atlanta": "America/New_York", "Miami": "America/New_York", "Ashburn": "America/New_York",
	"New York": "America/New_York", "Toronto": "America/Toronto", "Vancouver": "America/Vancouver",
	"Sao Paulo": "America/Sao_Paulo", "London": "Europe/London", "Frankfurt": "Europe/Berlin",
	"Amsterdam": "Europe/Amsterdam", "Paris": "Europe/Paris", "Marseille": "Europe/Paris",
	"Stockholm": "Europe/Stockholm", "Warsaw": "Europe/Warsaw", "Madrid": "Europe/Madrid",
	"Milan": "Europe/Rome", "Moscow": "Europe/Moscow", "Istanbul": "Europe/Istanbul",
	"Johannesburg": "Africa/Johannesburg",
}

// Zone is the IANA time zone of the city name (any of its names in the
// table); false for a city the table does not hold.
func Zone(city string) (string, bool) {
	loc, ok := City(city)
	if !ok {
		return "", false
	}
	z, ok := zones[loc.Name]
	return z, ok
}
