// The whole match of `roost classad match`, done natively by HTCondor's own
// ClassAd library (libclassad), for tools/bench_match.sh.
//
//   htcondor_match MACHINES JOBS
//
// Reads the two files of old-syntax ads (blank lines between ads, one
// `Name = expression` per line; each expression parsed by HTCondor's
// parser and inserted into the ad, as HTCondor's old-ad reader does), then,
// for every job, evaluates the symmetric match against every machine in one
// reused match ad (the job on the left) and the job's Rank of each match,
// keeping the best. Prints the number of matching pairs and the time the
// loop took; the process's own run time is measured by the caller.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <classad/classad_distribution.h>

static std::vector<classad::ClassAd *> read_ads(const char *path) {
    std::ifstream in(path);
    if (!in) {
        std::cerr << path << ": cannot open\n";
        std::exit(2);
    }
    classad::ClassAdParser parser;
    std::vector<classad::ClassAd *> ads;
    classad::ClassAd *ad = nullptr;
    std::string line;
    while (std::getline(in, line)) {
        size_t start = line.find_first_not_of(" \t\r");
        if (start == std::string::npos) {
            ad = nullptr;  // a blank line ends the ad
            continue;
        }
        if (line[start] == '#') continue;
        size_t eq = line.find('=', start);
        if (eq == std::string::npos) continue;
        size_t name_end = line.find_last_not_of(" \t", eq - 1);
        std::string name = line.substr(start, name_end + 1 - start);
        classad::ExprTree *tree = parser.ParseExpression(line.substr(eq + 1));
        if (!tree) {
            std::cerr << path << ": cannot parse: " << line << "\n";
            std::exit(2);
        }
        if (!ad) {
            ad = new classad::ClassAd();
            ads.push_back(ad);
        }
        ad->Insert(name, tree);
    }
    return ads;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::cerr << "usage: htcondor_match MACHINES JOBS\n";
        return 2;
    }
    std::vector<classad::ClassAd *> machines = read_ads(argv[1]);
    std::vector<classad::ClassAd *> jobs = read_ads(argv[2]);
    auto begin = std::chrono::steady_clock::now();
    classad::MatchClassAd mad;
    long matches = 0;
    double rank_sum = 0;
    for (classad::ClassAd *job : jobs) {
        mad.ReplaceLeftAd(job);
        bool found = false;
        double best = 0;
        for (classad::ClassAd *machine : machines) {
            // The match ad would delete a replaced ad: take it back first.
            mad.ReplaceRightAd(machine);
            bool matched = mad.symmetricMatch();
            double rank = 0;
            if (matched) {
                ++matches;
                classad::Value v;
                if (!mad.EvaluateAttr("leftRankValue", v) || !v.IsNumber(rank)) rank = 0;
            }
            mad.RemoveRightAd();
            if (matched && (!found || rank > best)) {
                found = true;
                best = rank;
            }
        }
        mad.RemoveLeftAd();
        if (found) rank_sum += best;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    std::printf("{\"pairs\": %zu, \"matches\": %ld, \"best_rank_sum\": %.3f, \"loop_seconds\": %.4f}\n",
                machines.size() * jobs.size(), matches, rank_sum, secs);
    return 0;
}
